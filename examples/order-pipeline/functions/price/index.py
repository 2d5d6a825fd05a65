import json
import os

HERE = os.path.dirname(__file__)


def handler(event, context):
    order = json.loads(event)
    with open(os.path.join(HERE, "prices.json")) as f:  # written by the pre-deploy action
        prices = json.load(f)
    net = sum(i["qty"] * i["price"] for i in order["items"])
    return {"order": order["order"], "net": net, "gross": round(net * (1 + prices["vat"]), 2),
            "currency": prices["currency"], "validated_by": os.environ["VALIDATED_BY"]}
