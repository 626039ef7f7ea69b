// memcli for OpenCode: a session's briefing and each prompt's recall, added to the system
// prompt. Written by 'memcli agent install opencode' (removed by uninstall); do not edit.
import { spawnSync } from "node:child_process";

const MEMCLI = __MEMCLI__;

function context(event, payload) {
  if (process.env.MEMCLI_AGENT_CHILD) return "";
  const run = spawnSync(MEMCLI[0], [...MEMCLI.slice(1), "agent", "hook", event], {
    input: JSON.stringify(payload),
    encoding: "utf-8",
    timeout: 20000,
  });
  try {
    const answer = JSON.parse(run.stdout || "{}");
    return answer?.hookSpecificOutput?.additionalContext || "";
  } catch {
    return "";
  }
}

export const MemcliPlugin = async ({ directory }) => {
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
  };
};
