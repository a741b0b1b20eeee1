"""The official openai SDK through agent's relay, as a user would write it.

Environment: RELAY_BASE_URL (http://127.0.0.1:PORT/openai/v1), RELAY_TOKEN (the relay
token, used as the API key), MODEL, PROMPT. Argument: plain or stream.
Prints one JSON object on stdout; any unexpected error is a traceback and exit 1.
"""

import json
import os
import sys
import time

import openai

client = openai.OpenAI(
    base_url=os.environ["RELAY_BASE_URL"],
    api_key=os.environ["RELAY_TOKEN"],
    max_retries=0,
    timeout=30.0,
)
model = os.environ["MODEL"]
messages = [{"role": "user", "content": os.environ["PROMPT"]}]
mode = sys.argv[1]

if mode == "plain":
    completion = client.chat.completions.create(model=model, max_tokens=64, messages=messages)
    out = {
        "id": completion.id,
        "text": completion.choices[0].message.content,
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
    }
elif mode == "stream":
    started = time.monotonic()
    first_text = None
    texts = []
    usage = None
    # No stream_options: the relay adds include_usage, so the last chunk carries usage.
    for chunk in client.chat.completions.create(
        model=model, max_tokens=64, messages=messages, stream=True
    ):
        for choice in chunk.choices:
            if choice.delta.content:
                if first_text is None:
                    first_text = time.monotonic() - started
                texts.append(choice.delta.content)
        if chunk.usage is not None:
            usage = {"prompt_tokens": chunk.usage.prompt_tokens, "completion_tokens": chunk.usage.completion_tokens}
    out = {
        "text": "".join(texts),
        "first_text_s": first_text,
        "end_s": time.monotonic() - started,
        "usage": usage,
    }
else:
    sys.exit(f"unknown mode {mode}")

print(json.dumps(out))
