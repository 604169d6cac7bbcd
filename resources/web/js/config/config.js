// The configuration tab: models, task, the selected run's teams, the Judger and workers.
// In the demo everything here is disabled: it reads no credentials and changes nothing.
import { $ } from "../dom.js";
import { state } from "../state.js";
import { renderJudger } from "./judger.js";
import { renderModels } from "./models.js";
import { renderTask } from "./task.js";
import { renderWorkers } from "./workers.js";

export async function renderConfig() {
  const demo = Boolean(state.info?.demo);
  $("#config-disabled").hidden = !demo;
  $("#config-body").hidden = demo;
  if (demo) return;
  await Promise.all([
    renderModels($("#models")),
    renderTask($("#task"), $("#run-teams")),
    renderJudger($("#judger-config")),
    renderWorkers($("#workers")),
  ]);
}
