import json


def handler(event, context):
    order = json.loads(event)
    items = [i for i in order["items"] if i.get("qty", 0) > 0]
    return {"order": order["order"], "items": items, "valid": bool(items)}
