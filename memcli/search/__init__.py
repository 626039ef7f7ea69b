"""Search: query parsing, candidates, fusion, ranking, snippets and context blocks."""
