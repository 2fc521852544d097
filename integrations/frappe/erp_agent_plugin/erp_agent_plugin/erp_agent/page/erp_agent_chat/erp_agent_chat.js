// The chat page: a question goes to erp_agent_plugin.api.ask (every ERP call runs as you); a
// proposal is written only when you press Confirm (erp_agent_plugin.api.confirm).
frappe.pages["erp-agent-chat"].on_page_load = function (wrapper) {
  const page = frappe.ui.make_app_page({ parent: wrapper, title: __("ERP Agent"), single_column: true });
  const log = $('<div class="erp-agent-log"></div>').appendTo(page.body);
  const input = $('<textarea class="form-control" rows="2"></textarea>').appendTo(page.body);
  let conversation = null;

  function show(markdown, who) {
    $('<div class="erp-agent-msg"></div>').addClass(who).html(frappe.markdown(markdown)).appendTo(log);
  }

  function proposals(blocks) {
    (blocks || []).filter((b) => b.type === "proposal").forEach((p) => {
      const button = $(`<button class="btn btn-primary btn-sm">${__("Confirm")}</button>`).appendTo(log);
      button.on("click", () => frappe.call({
        method: "erp_agent_plugin.api.confirm",
        args: { proposal_id: p.id, payload_hash: p.payload_hash },
      }).then((r) => show(r.message.outcome.message, "agent")));
    });
  }

  page.set_primary_action(__("Ask"), () => {
    const message = input.val().trim();
    if (!message) return;
    show(frappe.utils.escape_html(message), "user");
    input.val("");
    frappe.call({ method: "erp_agent_plugin.api.ask", args: { message, conversation_id: conversation }, freeze: true })
      .then((r) => {
        const reply = r.message;
        if (reply.status !== "final") return show(reply.message || __("The agent could not answer."), "agent");
        conversation = reply.response.conversation_id;
        show(reply.markdown, "agent");
        proposals(reply.response.blocks);
      });
  });
};
