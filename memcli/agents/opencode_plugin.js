// memcli for OpenCode: a session's briefing and each prompt's recall, added to the system
// prompt; the session's turns saved as facts when it goes idle. Written by 'memcli agent
// install opencode' (removed by uninstall); do not edit.
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const MEMCLI = __MEMCLI__;

function run(event, payload) {
  return spawnSync(MEMCLI[0], [...MEMCLI.slice(1), "agent", "hook", event], {
    input: JSON.stringify(payload),
    encoding: "utf-8",
    timeout: 20000,
  });
}

function context(event, payload) {
  if (process.env.MEMCLI_AGENT_CHILD) return "";
  try {
    const answer = JSON.parse(run(event, payload).stdout || "{}");
    return answer?.hookSpecificOutput?.additionalContext || "";
  } catch {
    return "";
  }
}

// Where the session's messages are written for memcli to read (one JSON line per message,
// as OpenCode's API gives them: {info, parts}); memcli reads OpenCode's sessions there.
function transcript(id) {
  const data = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  const folder = join(data, "opencode", "memcli-sessions");
  mkdirSync(folder, { recursive: true });
  return join(folder, `${id}.jsonl`);
}

export const MemcliPlugin = async ({ client, directory }) => {
  const sessions = new Map(); // session id -> {briefing, prompt, recall}
  return {
    "chat.message": async (input, output) => {
      const id = input.sessionID;
      const state = sessions.get(id) || {};
      if (state.briefing === undefined) {
        const payload = { session_id: id, cwd: directory, hook_event_name: "SessionStart" };
        state.briefing = context("session-start", { ...payload, source: "startup" });
      }
      const prompt = (output.parts || [])
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      const payload = { session_id: id, cwd: directory, hook_event_name: "UserPromptSubmit" };
      state.recall = context("prompt", { ...payload, prompt });
      sessions.set(id, state);
    },
    "experimental.chat.system.transform": async (input, output) => {
      const state = sessions.get(input.sessionID);
      for (const text of [state?.briefing, state?.recall]) {
        if (text) output.system.push(text);
      }
    },
    // a turn is over: its messages written out, and memcli's session-end hook flushes the
    // turns it has not saved yet (in the background); a child memcli started never does
    event: async ({ event }) => {
      if (event.type !== "session.idle" || process.env.MEMCLI_AGENT_CHILD) return;
      const id = event.properties?.sessionID;
      if (!id || !client) return;
      try {
        // a sub-agent's session (it has a parent) is part of its parent's work: not saved
        const info = await client.session.get?.({ path: { id } });
        if (info?.data?.parentID) return;
        const got = await client.session.messages({ path: { id } });
        // what memcli reads of a message: its text parts (tool calls and their output,
        // files, steps left out)
        const texts = (parts) => (parts || []).filter((part) => part.type === "text");
        const messages = (got?.data || []).map((m) => ({ info: m.info, parts: texts(m.parts) }));
        const lines = messages.map((m) => JSON.stringify(m)).join("\n");
        const path = transcript(id);
        writeFileSync(`${path}.tmp`, lines + "\n");
        renameSync(`${path}.tmp`, path);
        const payload = { session_id: id, cwd: directory, transcript_path: path };
        run("session-end", { ...payload, hook_event_name: "SessionEnd", reason: "idle" });
      } catch {
        // memory is a help, never in the way of the session
      }
    },
  };
};
