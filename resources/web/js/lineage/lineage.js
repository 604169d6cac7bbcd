// The candidate lineage tab: every candidate of the run as a tree, parent = the source it was derived from.
import { $, h } from "../dom.js";
import { t } from "../i18n.js";

export class LineageView {
  async load() {
    $("#lineage").replaceChildren(h("p", { class: "muted", text: t("lineage_title") }));
  }
}
