"""The notes: workspace layout, the entry format and appends, finding files, redaction."""
