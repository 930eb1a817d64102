// The transcript formats the viewer reads, one module each (format-<name>.js), found by the agent a
// history entry names. An entry that names none is Claude Code's.
import * as claude from "./format-claude.js";
import * as codex from "./format-codex.js";
import * as gemini from "./format-gemini.js";

const FORMATS = [claude, codex, gemini];

/** The format module of a history entry. */
export function formatOf(e) {
  const agent = e && e.agent;
  return FORMATS.find((f) => f.name === agent) ?? claude;
}
