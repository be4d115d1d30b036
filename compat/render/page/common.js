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
