"""Shoal's Blob endpoint driven by Azure's own Python clients.

azure-storage-blob uploads (whole and in blocks), downloads, reads
properties and lists on workspaceblobstore with the SAS that azure-ai-ml
reads from the datastore, at the path-style account URL; then
azure-ai-ml registers a code asset, uploading a folder as it does for a
job's `code=`: to https://shoal.blob.core.windows.net, which the test
resolves to the server. Each step prints one JSON line that the Go test
(e2e/azureblob_test.go) checks.
"""
import hashlib
import json
import os

from azure.ai.ml import MLClient
from azure.ai.ml.entities._assets._artifacts.code import Code  # not exported by 1.4.0
from azure.identity import DefaultAzureCredential
from azure.storage.blob import BlobServiceClient


def step(step_name, **fields):
    print(json.dumps({"step": step_name, **fields}), flush=True)


ml_client = MLClient(DefaultAzureCredential(), "any-subscription", "any-rg", "default")

ds = ml_client.datastores.get("workspaceblobstore", include_secrets=True)
sas = ds.credentials.sas_token
step("datastore", type=str(ds.type), account=ds.account_name, container=ds.container_name, has_sas=bool(sas))

# azure-storage-blob at the path-style account URL (an IP host).
svc = BlobServiceClient(account_url=os.environ["BLOB_ACCOUNT_URL"], credential=sas,
                        max_single_put_size=1024 * 1024, max_block_size=1024 * 1024)
cc = svc.get_container_client("workspaceblobstore")
cc.upload_blob("e2e/hello.txt", b"hello, blob", overwrite=True, metadata={"who": "python"})
big = os.urandom(3 * 1024 * 1024 + 17)
cc.upload_blob("e2e/big.bin", big, overwrite=True, max_concurrency=2)
back = cc.download_blob("e2e/big.bin", max_concurrency=2).readall()
part = cc.download_blob("e2e/big.bin", offset=1024 * 1024 - 3, length=6).readall()
props = cc.get_blob_client("e2e/hello.txt").get_blob_properties()
cc.upload_blob("e2e/empty", b"", overwrite=True)
empty = cc.download_blob("e2e/empty").readall()
names = [b.name for b in cc.list_blobs(name_starts_with="e2e/")]
step("storage_blob", same=(back == big), empty=(empty == b""), part=(part == big[1024 * 1024 - 3:1024 * 1024 + 3]),
     size=props.size, who=props.metadata.get("who"), names=names,
     sha=hashlib.sha256(back).hexdigest() == hashlib.sha256(big).hexdigest())

try:
    cc.upload_blob("e2e/hello.txt", b"again", overwrite=False)
    step("overwrite_refused", refused=False)
except Exception as e:  # ResourceExistsError
    step("overwrite_refused", refused=True, error=type(e).__name__)

# azure-ai-ml's code upload: what command(code="./src") does first.
here = os.path.dirname(os.path.abspath(__file__))
code = ml_client._code.create_or_update(Code(name="e2e-code", version="1", path=os.path.join(here, "code", "src")))
got = ml_client._code.get("e2e-code", "1")
step("code", name=got.name, version=got.version, path=str(got.path))
uploaded = sorted(b.name for b in cc.list_blobs(name_starts_with="LocalUpload/"))
step("code_blobs", names=uploaded)
# Again: the upload is found by its confirmation metadata, not repeated.
again = ml_client._code.create_or_update(Code(name="e2e-code", version="1", path=os.path.join(here, "code", "src")))
step("code_again", version=again.version, path=str(again.path))
