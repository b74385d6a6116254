// The checkout page's script: pays the order with a browser wallet (EIP-1193, called directly: no
// library) and follows the order's event stream to the end.
//
//   1. eth_requestAccounts, eth_chainId (wallet_switchEthereumChain if needed)
//   2. where the token has EIP-3009 (USDC: paymentDetails.authorization), eth_signTypedData_v4 of that
//      ReceiveWithAuthorization with `from` filled in (the wallet shows the order's expiry), then
//      POST /v1/orders/{id}/authorization {from, signature}: the service submits payWithAuthorization;
//   3. otherwise, where the token has EIP-2612, the token's nonces(owner), read with eth_call through the wallet,
//      eth_signTypedData_v4 of paymentDetails.permit with owner and nonce filled in, then
//      POST /v1/orders/{id}/permit {owner, signature}: the service submits payWithPermit;
//   4. otherwise (a token with neither, as USDT: paymentDetails.permit2) the wallet approves Permit2 for the token
//      once (eth_sendTransaction, if its allowance does not cover the order), eth_signTypedData_v4 of
//      paymentDetails.permit2, then POST /v1/orders/{id}/permit2 {owner, signature}: payWithPermit2
//   5. GET /v1/orders/{id}/events (SSE): payment.succeeded, then device.powered_on, whatever paid the order
//      (this wallet, or a transfer from a phone wallet to the order's deposit address: the transfer QR code)
"use strict";

(() => {
  const root = document.getElementById("checkout");
  if (!root) return;
  const orderId = root.dataset.orderId;
  const $ = (id) => document.getElementById(id);
  const payButton = $("pay");
  const statusBox = $("status");
  const errorBox = $("error");
  const steps = $("steps");
  let order;
  let stream;

  const DOMAIN_FIELDS = [
    ["name", "string"],
    ["version", "string"],
    ["chainId", "uint256"],
    ["verifyingContract", "address"],
    ["salt", "bytes32"],
  ];
  const NONCES_SELECTOR = "0x7ecebe00"; // nonces(address)
  const ALLOWANCE_SELECTOR = "0xdd62ed3e"; // allowance(address,address)
  const APPROVE_SELECTOR = "0x095ea7b3"; // approve(address,uint256)

  function setStatus(kind, html) {
    statusBox.className = `status status-${kind}`;
    statusBox.innerHTML = html;
    root.dataset.state = kind;
  }
  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = !message;
  }
  function step(name, state) {
    const item = steps.querySelector(`[data-step="${name}"]`);
    if (item) item.className = state;
  }
  function utc(iso) {
    return `${new Date(iso).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  }
  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  async function loadOrder() {
    const response = await fetch(`/v1/orders/${orderId}`, { headers: { accept: "application/json" } });
    if (!response.ok) throw new Error(`the order could not be loaded (${response.status})`);
    order = await response.json();
    return order;
  }

  function paid(data) {
    if (root.dataset.state === "done") return;
    step("connect", "done");
    step("sign", "done");
    step("confirm", "done");
    step("power", "active");
    payButton.hidden = true;
    showError("");
    setStatus("paid", "<strong>Paid.</strong> Powering the device on…");
    $("receipt").hidden = false;
    if (data && data.transactionHash) $("tx-hash").textContent = data.transactionHash;
  }

  function poweredOn(data) {
    paid();
    step("power", "done");
    setStatus("paid", `<strong>Paid. The device is on</strong> until ${escapeHtml(utc(data.sessionEndsAt))}.`);
    $("session-ends").textContent = utc(data.sessionEndsAt);
    root.dataset.state = "done";
    if (stream) stream.close();
  }

  function follow() {
    if (stream || typeof EventSource === "undefined") return;
    stream = new EventSource(`/v1/orders/${orderId}/events`);
    const on = (type, fn) => stream.addEventListener(type, (e) => fn(JSON.parse(e.data)));
    on("state", (o) => {
      if (o.status === "success") {
        paid(o.payment);
        if (o.device && o.device.poweredOnAt) poweredOn({ sessionEndsAt: o.device.sessionEndsAt });
      } else if (o.status === "expired") expired();
    });
    on("payment.submitted", () => {
      step("sign", "done");
      step("confirm", "active");
      setStatus("pending", "Payment submitted. Waiting for the chain…");
    });
    on("payment.failed", (d) => {
      step("confirm", "failed");
      payButton.hidden = false;
      payButton.disabled = false;
      showError(`The payment failed${d && d.error ? `: ${d.error}` : ""}. You can try again.`);
    });
    on("payment.succeeded", paid);
    on("device.powered_on", poweredOn);
    on("device.power_on_failed", () => {
      step("power", "failed");
      setStatus("paid", "<strong>Paid</strong>, but the device could not be powered on. The operator has been notified.");
      if (stream) stream.close();
    });
    on("order.expired", expired);
  }

  function expired() {
    payButton.hidden = true;
    steps.hidden = true;
    setStatus("expired", "<strong>This order has expired.</strong> Scan the device's QR code again for a new one.");
    if (stream) stream.close();
  }

  function domainTypes(domain) {
    return DOMAIN_FIELDS.filter(([name]) => domain[name] !== undefined).map(([name, type]) => ({ name, type }));
  }

  async function pay() {
    showError("");
    const wallet = window.ethereum;
    if (!wallet || typeof wallet.request !== "function") {
      showError("No browser wallet was found. Install one, or scan the QR code with your phone's wallet app.");
      return;
    }
    payButton.disabled = true;
    try {
      if (!order || !order.paymentDetails) await loadOrder();
      const details = order.paymentDetails;
      if (!details) throw new Error(`the order is ${order.status}`);

      step("connect", "active");
      const accounts = await wallet.request({ method: "eth_requestAccounts" });
      const owner = accounts && accounts[0];
      if (!owner) throw new Error("the wallet returned no account");
      const chainId = Number.parseInt(await wallet.request({ method: "eth_chainId" }), 16);
      if (chainId !== details.chainId) {
        await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${details.chainId.toString(16)}` }] });
      }
      step("connect", "done");

      step("sign", "active");
      const submission = details.authorization
        ? await signAuthorization(wallet, details.authorization, owner)
        : details.permit
          ? await signPermit(wallet, details, owner)
          : await signPermit2(wallet, details, owner);
      step("sign", "done");

      step("confirm", "active");
      setStatus("pending", "Submitting the payment…");
      follow();
      const response = await fetch(submission.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(submission.body),
      });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(body.error ? body.error.message : `the service answered ${response.status}`);
      payButton.hidden = true;
      setStatus("pending", "Payment submitted. Waiting for the chain…");
    } catch (error) {
      const rejected = error && (error.code === 4001 || error.code === "ACTION_REJECTED");
      showError(
        rejected ? "You declined the request in your wallet." : `Payment failed: ${error && error.message ? error.message : error}`,
      );
      for (const item of steps.querySelectorAll("li.active")) item.className = "failed";
      payButton.disabled = false;
    }
  }

  /** USDC's own rail: one ReceiveWithAuthorization that only the router can use, for this order only. */
  async function signAuthorization(wallet, authorization, from) {
    const typedData = {
      types: { EIP712Domain: domainTypes(authorization.domain), ...authorization.types },
      domain: authorization.domain,
      primaryType: authorization.primaryType,
      message: { from, ...authorization.message },
    };
    const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [from, JSON.stringify(typedData)] });
    return { url: `/v1/orders/${orderId}/authorization`, body: { from, signature } };
  }

  /** The EIP-2612 permit of the order, with the wallet's current nonce at the token. */
  async function signPermit(wallet, details, owner) {
    const nonceHex = await wallet.request({
      method: "eth_call",
      params: [{ to: details.token.address, data: NONCES_SELECTOR + owner.slice(2).toLowerCase().padStart(64, "0") }, "latest"],
    });
    const nonce = BigInt(nonceHex === "0x" ? "0x0" : nonceHex).toString();
    const permit = details.permit;
    const typedData = {
      types: { EIP712Domain: domainTypes(permit.domain), ...permit.types },
      domain: permit.domain,
      primaryType: permit.primaryType,
      message: { owner, spender: permit.message.spender, value: permit.message.value, nonce, deadline: permit.message.deadline },
    };
    const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [owner, JSON.stringify(typedData)] });
    return { url: `/v1/orders/${orderId}/permit`, body: { owner, signature } };
  }

  /** Permit2, for a token without EIP-2612 or EIP-3009: one approval of Permit2 for the token (a transaction, the
   * first time only), then one signature that pays this order only, once, until its expiry. */
  async function signPermit2(wallet, details, owner) {
    const permit2 = details.permit2;
    if (!permit2) throw new Error("this order's token cannot be paid from a browser wallet here: scan the transfer QR code");
    const spender = permit2.domain.verifyingContract.slice(2).toLowerCase().padStart(64, "0");
    const allowanceHex = await wallet.request({
      method: "eth_call",
      params: [
        { to: details.token.address, data: ALLOWANCE_SELECTOR + owner.slice(2).toLowerCase().padStart(64, "0") + spender },
        "latest",
      ],
    });
    if (BigInt(allowanceHex === "0x" ? "0x0" : allowanceHex) < BigInt(details.amount)) {
      setStatus("pending", "Approve Permit2 for this token in your wallet (once)…");
      const hash = await wallet.request({
        method: "eth_sendTransaction",
        params: [{ from: owner, to: details.token.address, data: APPROVE_SELECTOR + spender + "f".repeat(64) }],
      });
      for (let receipt = null; !receipt;) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        receipt = await wallet.request({ method: "eth_getTransactionReceipt", params: [hash] });
        if (receipt && receipt.status !== "0x1") throw new Error("the approval of Permit2 failed");
      }
    }
    const typedData = {
      types: { EIP712Domain: domainTypes(permit2.domain), ...permit2.types },
      domain: permit2.domain,
      primaryType: permit2.primaryType,
      message: permit2.message,
    };
    const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [owner, JSON.stringify(typedData)] });
    return { url: `/v1/orders/${orderId}/permit2`, body: { owner, signature } };
  }

  function tick() {
    const expiry = $("expiry");
    if (!expiry || root.dataset.state !== "pending") return;
    const left = new Date(expiry.dataset.expiresAt).getTime() - Date.now();
    if (left <= 0) {
      expiry.textContent = "expired";
      return;
    }
    const m = Math.floor(left / 60000);
    const s = Math.floor((left % 60000) / 1000);
    expiry.textContent = `in ${m}:${String(s).padStart(2, "0")} (${utc(expiry.dataset.expiresAt)})`;
  }

  const report = $("report");
  if (report) {
    report.addEventListener("submit", async (event) => {
      event.preventDefault();
      const status = $("report-status");
      const form = new FormData(report);
      const body = { category: form.get("category"), message: String(form.get("message") || "").trim(), orderId };
      const contact = String(form.get("contact") || "").trim();
      if (contact) body.contact = contact;
      const response = await fetch(`/v1/devices/${encodeURIComponent(root.dataset.deviceId)}/tickets`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await response.json().catch(() => ({}));
      status.hidden = false;
      if (response.ok) {
        status.textContent = `Thank you. Your report ${answer.id} was sent to the operator.`;
        report.reset();
      } else {
        status.textContent = answer.error ? answer.error.message : `The report could not be sent (${response.status}).`;
      }
    });
  }

  // Copy buttons (the deposit address of the transfer request).
  for (const button of document.querySelectorAll("[data-copy]")) {
    button.addEventListener("click", async () => {
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        button.textContent = "Copied";
      } catch {
        button.textContent = "Select and copy it above";
      }
      setTimeout(() => (button.textContent = label), 2000);
    });
  }

  payButton.addEventListener("click", () => void pay());
  setInterval(tick, 1000);
  tick();
  if (root.dataset.state !== "expired") follow();
})();
