// What every page's script starts with (html.py puts it first).
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, props, text) => {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  if (text !== undefined) node.textContent = text;
  return node;
};
/** `url` resolved, when it is an http(s) address, or with `local` one beside the page (a
 * command's log); null for anything else (`javascript:`, `data:`): text, never a link. */
function linkable(url, local) {
  let resolved;
  try {
    resolved = new URL(url, location.href);
  } catch (error) {
    return null;
  }
  if (resolved.protocol === "http:" || resolved.protocol === "https:") return resolved.href;
  return local && resolved.protocol === location.protocol ? resolved.href : null;
}
