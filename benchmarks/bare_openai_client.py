"""The floor of ``benchmarks/judges_run.py``: the same calls made by the ``openai`` SDK alone, with no ragassay.

For each of ``SAMPLES`` questions, ``CONCURRENCY`` at once, it sends the two requests a ``ragassay run`` of that
benchmark sends (the generator's answer, then the ``correctness`` judge's structured judgement, byte for byte the
same bodies), through ``openai.AsyncOpenAI`` clients made as ragassay's ``openai`` backend makes them (one per 8
concurrent calls and model, no SDK retries) and called as it calls them (the SDK's raw route). It reads nothing,
stores nothing and checks nothing but the judge's JSON, then ends the way the ``ragassay`` command ends (flushed
output, :func:`os._exit`). Whatever a whole ``ragassay run`` spends beyond this script is ragassay's; this
script's own time is the SDK's and the machine's.

    python benchmarks/bare_openai_client.py URL SAMPLES CONCURRENCY
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

ANSWER_SYSTEM = "You are a helpful assistant. Answer the question concisely."
JUDGE_PROMPT = (
    "Evaluate the accuracy of the given response in relation to the true answer for the specified query. After "
    'evaluating, provide a judgement as either "Correct" or "Incorrect" based on whether the ##Given Response## '
    "accurately matches the ##True Answer##.\n##Query##: {question}\n##True Answer##: {reference}\n"
    "##Given Response##: {answer}\n##Judgement##:"
)
JUDGED_SCHEMA = {
    "name": "Judged",
    "schema": {
        "description": "The judge's structured reply: the explanation first, then the judgement.",
        "properties": {
            "explanation": {
                "description": "How the given response compares with the true answer, before the judgement.",
                "title": "Explanation",
                "type": "string",
            },
            "judgement": {
                "description": '"Correct" if the given response accurately matches the true answer, else "Incorrect".',
                "title": "Judgement",
                "type": "string",
            },
        },
        "required": ["explanation", "judgement"],
        "title": "Judged",
        "type": "object",
    },
    "strict": False,
}


async def sample(clients: dict[str, list], slot: int, index: int) -> None:
    """One question: the answer, then the judgement of it (two dependent calls), through the SDK's documented raw
    route (``client.post(..., cast_to=object)``), which ragassay's backend uses too: the SDK's auth, errors and
    transport without its typed request transform and response model."""
    question = f"Who built reactor {index}?"
    asked = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Question: {question}"},
        ],
        "temperature": 0.0,
    }
    answer = await clients["answer"][slot % len(clients["answer"])].post(
        "/chat/completions", body=asked, cast_to=object
    )
    prompt = JUDGE_PROMPT.format(
        question=question, reference="Ada Lovelace Labs", answer=answer["choices"][0]["message"]["content"]
    )
    judged = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0.0,
        "response_format": {"type": "json_schema", "json_schema": JUDGED_SCHEMA},
    }
    reply = await clients["judge"][slot % len(clients["judge"])].post("/chat/completions", body=judged, cast_to=object)
    json.loads(reply["choices"][0]["message"]["content"])["judgement"]


async def main(url: str, samples: int, concurrency: int) -> None:
    import openai

    shards = max(1, -(-concurrency // 8))

    def client() -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=f"{url}/v1",
            api_key="sk-benchmark-not-a-real-key",
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(),
        )

    clients = {"answer": [client() for _ in range(shards)], "judge": [client() for _ in range(shards)]}
    pending = iter(range(samples))

    async def slot(number: int) -> None:
        for index in pending:
            await sample(clients, number, index)

    await asyncio.gather(*(slot(number) for number in range(concurrency)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
