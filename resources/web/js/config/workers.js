// Workers: the SSH hosts of hosts.toml (a password goes to the encrypted secrets store; the
// file only names it) and the local worker slots (a task setting).
import * as api from "../api.js";
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { table } from "../results/tables.js";
import { confirmButton, field, formStatus, input, select, submit, values } from "./form.js";

function hostList(hosts, reload) {
  if (!hosts.length) return h("p", { class: "muted", text: t("no_hosts") });
  return table(
    [t("f_name"), t("f_address"), t("f_user"), t("f_host_slots"), t("f_devices"), t("f_toolchain"), ""],
    hosts.map((host) => h("tr", { dataset: { host: host.name } },
      h("td", { class: "mono", text: host.name }),
      h("td", { class: "mono", text: `${host.address}:${host.port}` }),
      h("td", { text: host.user }),
      h("td", { text: host.slots }),
      h("td", { text: host.devices }),
      h("td", { text: host.toolchain }),
      h("td", {}, confirmButton("delete", async () => {
        await api.send("DELETE", `/api/config/workers/hosts/${encodeURIComponent(host.name)}`);
        await reload();
      }, { class: "delete" })))),
  );
}

function hostForm(reload) {
  const f = h("form", { class: "form grid-form", novalidate: true, id: "host-form" });
  f.append(
    h("h3", { text: t("hosts_title") }),
    field("name", "f_name", input("text", { placeholder: "npu1" })),
    field("address", "f_address", input("text", { placeholder: "10.0.0.5" })),
    field("port", "f_port", input("number", { value: 22, min: 1, max: 65535 })),
    field("user", "f_user", input("text")),
    field("key_file", "f_key_file", input("text", { placeholder: "~/.ssh/id_ed25519" })),
    field("password", "f_password", input("password", { autocomplete: "new-password" }), "f_api_key_hint"),
    field("known_hosts", "f_known_hosts", select([["strict", "strict"], ["accept-new", "accept-new"]], "strict")),
    field("slots", "f_host_slots", input("number", { value: 1, min: 1, max: 8 })),
    field("devices", "f_devices", input("number", { value: 0, min: 0, max: 64 })),
    field("toolchain", "f_toolchain", select([["cpu", "cpu"], ["cann", "cann"]], "cpu")),
    field("scratch_dir", "f_scratch_dir", input("text", { value: "/tmp/justkernel" })),
    h("div", { class: "buttons" }, h("button", { type: "submit", text: t("save") })),
    formStatus(),
  );
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = values(f);
    const done = await submit(f, () => api.send("POST", "/api/config/workers/hosts", body), reload);
    if (done) f.querySelector("[name=password]").value = "";
  });
  return f;
}

export async function renderWorkers(root) {
  const reload = async () => {
    const fresh = await api.get("/api/config/workers");
    root.querySelector(".hosts-list").replaceChildren(hostList(fresh.hosts, reload));
  };
  const data = await api.get("/api/config/workers");
  root.replaceChildren(
    h("p", { class: "muted small", text: `${t("f_slots")}: ${data.local_slots ?? "auto"} · ${data.hosts_file}` }),
    h("div", { class: "hosts-list scroll-x" }, hostList(data.hosts, reload)),
    hostForm(reload),
  );
}
