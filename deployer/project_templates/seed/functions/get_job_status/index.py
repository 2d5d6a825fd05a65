import logging
import time
import json
start_time = int(time.time())
def handler(event, context):
  evt = json.loads(event)
  logger = logging.getLogger()
  job_id = evt["job_id"]
  logger.info('Started job with ID %s' % job_id)
  now = int(time.time())
  status = "running"
  delay = 60
  if "delay" in evt:
    delay = evt["delay"]
  if now - start_time > delay:
    status = "success"
  else:
    status = "running"
  try_count = 0
  if "try_count" in evt:
    try_count = evt["try_count"]
  try_count = try_count + 1
  logger.info('Job %s, status %s, try_count %d' % (job_id, status, try_count))
  return {"job_id": job_id, "job_status":status, "try_count":try_count}
