"""The plugin's API handlers through the host's real route (helpers/api.register_api_route)
on a Flask test client: the host's CSRF check, its dispatch to plugins/<name>/<handler>, and
handle_request's JSON answer.

Run by run.sh: python check_api_routes.py AGENT_ZERO_COPY REPORT_DIR
"""

from __future__ import annotations

import json
import threading
import traceback

import host_session as hs

session = hs.open_host()
check = session.check


def main():
    from flask import Flask
    from helpers import api, plugins

    plugins.toggle_plugin(hs.PLUGIN, True)
    app = Flask("a0_reranker_routes")
    app.secret_key = "real-host-check"
    api.register_api_route(app, threading.Lock())
    client = app.test_client()
    with client.session_transaction() as flask_session:
        flask_session["csrf_token"] = "token"
    csrf = {"X-CSRF-Token": "token"}
    defaults = plugins.get_default_plugin_config(hs.PLUGIN)
    cases = [
        ("status", {}),
        ("settings_fields", {}),
        ("settings_check", {"config": defaults}),
        ("settings_check", {"config": dict(defaults, rerank_shadow_log="../x.jsonl")}),
        ("test_connection", {"config": defaults}),
        ("test_connection", {"config": dict(defaults, rerank_endpoint="http://127.0.0.1:9", rerank_timeout=2.0)}),
        ("test_connection", {"config": dict(defaults, rerank_endpoint="not a url")}),
        ("test_connection", {"config": dict(defaults, rerank_api="lexical")}),
    ]
    for name, body in cases:
        try:
            response = client.post(f"/api/plugins/{hs.PLUGIN}/{name}", json=body, headers=csrf)
            text = response.get_data(as_text=True)
            ok = response.status_code == 200 and isinstance(json.loads(text), dict)
            check(f"route {name} {json.dumps(body)[:50]}", ok, f"{response.status_code} {text[:300]}")
        except Exception:
            check(f"route {name}", False, traceback.format_exc()[-800:])
    response = client.post(f"/api/plugins/{hs.PLUGIN}/status", json={}, headers={})
    check("route without CSRF refused by the host (403)", response.status_code == 403, response.status_code)
    response = client.post(
        f"/api/plugins/{hs.PLUGIN}/test_connection",
        data="{not json",
        headers=dict(csrf, **{"Content-Type": "application/json"}),
    )
    check(
        "route with broken JSON body answers 200 JSON",
        response.status_code == 200,
        f"{response.status_code} {response.get_data(as_text=True)[:200]}",
    )


if __name__ == "__main__":
    try:
        main()
    except Exception:
        check("driver ran to the end", False, traceback.format_exc())
    session.finish(__file__)
