"""Build tests/data/mtrag/ from a git clone of IBM/mt-rag-benchmark at cc5b1d4 (kept for the record, see README.md).

Usage: python make_slice.py OUT_FOLDER GIT_DIR_OF_THE_CLONE
"""

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

OUT = Path(sys.argv[1])
GIT = ["git", "-C", sys.argv[2], "show"]
CID = "dd6b6ffd177f2b311abe676261279d2f"


def show(path):
    return subprocess.run(GIT + [f"cc5b1d4:{path}"], check=True, capture_output=True).stdout


def write(rel, data):
    p = OUT / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


write("LICENSE", show("LICENSE"))
for name in ("taskb_input.jsonl", "taskac_input.jsonl", "responses-10.jsonl"):
    write(f"sample_data/{name}", show(f"scripts/evaluation/sample_data/{name}"))
# MTRAG-UN generation tasks: the first line of each answerability label, as published.
lines, seen = [], set()
for line in show("mtragun-human/generation_tasks/reference.jsonl").decode().splitlines(keepends=True):
    label = json.loads(line)["answerability"][0]
    if label not in seen:
        seen.add(label)
        lines.append(line)
write("mtragun/generation_tasks/reference.jsonl", "".join(lines).encode())
# Retrieval tasks of the clapnq domain: conversation CID's rows, as published.
base = "mtrag-human/retrieval_tasks/clapnq"
for kind in ("lastturn", "rewrite", "questions"):
    rows = [
        row
        for row in show(f"{base}/clapnq_{kind}.jsonl").decode().splitlines(keepends=True)
        if row.startswith('{"_id":"' + CID)
    ]
    write(f"retrieval_tasks/clapnq/clapnq_{kind}.jsonl", "".join(rows).encode())
qrels = show(f"{base}/qrels/dev.tsv").decode().splitlines(keepends=True)
write(
    "retrieval_tasks/clapnq/qrels/dev.tsv",
    "".join([qrels[0]] + [row for row in qrels[1:] if row.startswith(CID)]).encode(),
)
# Corpus: the judged passages (their text from taskb_input.jsonl's reference contexts) plus distractors: every other
# clapnq passage whose text the published human-evaluation file holds (documents with ids of clapnq's form).
judged = {row.split("\t")[1] for row in qrels[1:] if row.startswith(CID)}
records = {}
for line in show("scripts/evaluation/sample_data/taskb_input.jsonl").decode().splitlines():
    task = json.loads(line)
    if task["Collection"].startswith("mt-rag-clapnq"):
        for c in task["contexts"]:
            records[c["document_id"]] = {
                "_id": c["document_id"],
                "title": c.get("title", ""),
                "text": c["text"],
                "url": c.get("url", ""),
            }
assert judged <= set(records), judged - set(records)
humeval = json.loads(show("mtrag-human/evaluations/reference_subset_with_human_evaluations.json"))
extra = 0
for doc in humeval["documents"]:
    did = doc["document_id"]
    if did not in records and did.split("_")[0].isdigit() and extra < 40:
        records[did] = {"_id": did, "title": doc.get("title", ""), "text": doc["text"], "url": ""}
        extra += 1
body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sorted(records.values(), key=lambda r: r["_id"]))
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    info = zipfile.ZipInfo("clapnq.jsonl", date_time=(2024, 5, 3, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, body)
write("corpora/passage_level/clapnq.jsonl.zip", buf.getvalue())
print(len(records), "passages,", len(judged), "judged,", extra, "distractors")

# conversations.json: IBM's file is a large blob our mirror lacks; rebuild the two conversations of
# responses-10.jsonl in the published layout (author, retriever.collection.name, messages with enrichments on user
# turns and contexts with relevance feedback on agent turns, status, domain).
tasks = [json.loads(row) for row in show("scripts/evaluation/sample_data/responses-10.jsonl").decode().splitlines()]
conversations = []
for cid in dict.fromkeys(t["conversation_id"] for t in tasks):
    own = sorted((t for t in tasks if t["conversation_id"] == cid), key=lambda t: t["turn"])
    last = own[-1]
    author = last["input"][0]["metadata"]["author_id"]
    messages = []
    for task in own:
        user = task["input"][-1]
        enr = user.get("enrichments", {})
        messages.append(
            {
                "speaker": "user",
                "text": user["text"],
                "timestamp": user["metadata"]["created_at"],
                "enrichments": {
                    "Question Type": enr.get("Question Type", []),
                    "Multi-Turn": enr.get("Multi-Turn", ["N/A"]),
                    "Answerability": enr.get("answerability", []),
                },
            }
        )
        target = task["targets"][0]
        contexts = [
            {
                "document_id": c["document_id"],
                "text": c["text"],
                "title": c.get("title", ""),
                "score": c.get("score"),
                "feedback": {"relevant": {author: {"value": "yes", "timestamp": target["metadata"]["created_at"]}}},
            }
            for c in task["contexts"]
        ]
        messages.append(
            {
                "speaker": "agent",
                "text": target["text"],
                "timestamp": target["metadata"]["created_at"],
                "contexts": contexts,
            }
        )
    conversations.append(
        {
            "author": author,
            "retriever": {"collection": {"name": last["collection"]}},
            "messages": messages,
            "status": "accepted",
            "domain": last["collection"],
        }
    )
write("conversations/conversations.json", json.dumps(conversations, ensure_ascii=False).encode())
print(len(conversations), "conversations", [len(c["messages"]) for c in conversations])
