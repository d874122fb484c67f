// A note opened at `#L3-L5` (or `#L3`) marks those lines, also when only the fragment changes.
"use strict";
function markCited() {
  const m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
  if (!m) return;
  const lo = Number(m[1]), hi = Number(m[2] || m[1]);
  for (let n = lo; n <= hi; n++) {
    const line = document.getElementById("L" + n);
    if (line) line.classList.add("cited");
  }
  const first = document.getElementById("L" + lo);
  if (first) first.scrollIntoView({block: "center"});
}
window.addEventListener("hashchange", markCited);
document.addEventListener("DOMContentLoaded", markCited);
