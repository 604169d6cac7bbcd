// One switch for all motion: CSS animations and SVG animations pause where they are; nothing
// else changes (the same rows, nodes and edges stay on screen). CSS animations pause through
// the body's motion-off class (app.css), SVG ones through pauseAnimations().

const KEY = "jk.motion";
let on = localStorage.getItem(KEY) !== "off" && !matchMedia("(prefers-reduced-motion: reduce)").matches;

export function motionOn() {
  return on;
}

export function applyMotion() {
  document.body.classList.toggle("motion-off", !on);
  document.querySelectorAll("svg").forEach((svg) => {
    if (typeof svg.pauseAnimations !== "function") return;
    if (on) svg.unpauseAnimations();
    else svg.pauseAnimations();
  });
}

export function setMotion(value) {
  on = Boolean(value);
  localStorage.setItem(KEY, on ? "on" : "off");
  applyMotion();
}
