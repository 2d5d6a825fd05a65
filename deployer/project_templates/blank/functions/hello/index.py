import json


def handler(event, context):
    """Function Compute's Python entry point: `event` is the request body (bytes)."""
    payload = json.loads(event or b"{}")
    name = payload.get("name") or "world"
    return {"greeting": f"Hello, {name}!"}
