"""Create StartJob on a running emulator with the official FC 3.0 SDK only; invoke it.

    deploy emulator start
    deploy package                      # writes .deploy/build/StartJob.zip
    eval "$(deploy emulator credentials --format env)"
    python examples/sdk_invoke_start_job.py .deploy/build/StartJob.zip
"""

from __future__ import annotations

import base64
import json
import os
import sys

from alibabacloud_fc20230330 import models
from alibabacloud_fc20230330.client import Client
from alibabacloud_tea_openapi.utils_models import Config


def main(zip_path: str) -> int:
    client = Client(
        Config(
            access_key_id=os.environ["ALIBABA_CLOUD_ACCESS_KEY_ID"],
            access_key_secret=os.environ["ALIBABA_CLOUD_ACCESS_KEY_SECRET"],
            endpoint=os.environ.get("DEPLOY_EMULATOR_ENDPOINT", "127.0.0.1:9125"),
            protocol="http",
            region_id="cn-hangzhou",
        )
    )
    with open(zip_path, "rb") as handle:
        code = base64.b64encode(handle.read()).decode()
    client.create_function(
        models.CreateFunctionRequest(
            body=models.CreateFunctionInput(
                function_name="StartJob",
                runtime="python3.10",
                handler="index.handler",
                timeout=30,
                code=models.InputCodeLocation(zip_file=code),
            )
        )
    )
    response = client.invoke_function("StartJob", models.InvokeFunctionRequest(body=b"{}"))
    print(json.loads(response.body.read())["job_id"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
