"""The official anthropic SDK through agent's relay, as a user would write it.

Environment: RELAY_BASE_URL (http://127.0.0.1:PORT/anthropic), RELAY_TOKEN (the relay
token, used as the API key), MODEL, PROMPT, and for a stream FIRST_TEXT_FILE (optional: a
file created the moment the first text arrives, while the stream goes on). Argument: plain,
stream or wrong-token. Prints one JSON object on stdout; any unexpected error is a
traceback and exit 1.
"""

import json
import os
import sys
import time

import anthropic

client = anthropic.Anthropic(
    base_url=os.environ["RELAY_BASE_URL"],
    api_key=os.environ["RELAY_TOKEN"],
    max_retries=0,
    timeout=30.0,
)
model = os.environ["MODEL"]
messages = [{"role": "user", "content": os.environ["PROMPT"]}]
mode = sys.argv[1]
out = {}

if mode == "plain":
    message = client.messages.create(model=model, max_tokens=64, messages=messages)
    out = {
        "id": message.id,
        "text": "".join(block.text for block in message.content if block.type == "text"),
        "input_tokens": message.usage.input_tokens,
        "output_tokens": message.usage.output_tokens,
    }
elif mode == "stream":
    started = time.monotonic()
    first_text = None
    texts = []
    with client.messages.stream(model=model, max_tokens=64, messages=messages) as stream:
        for text in stream.text_stream:
            if first_text is None:
                first_text = time.monotonic() - started
                if os.environ.get("FIRST_TEXT_FILE"):
                    open(os.environ["FIRST_TEXT_FILE"], "w").close()
            texts.append(text)
        final = stream.get_final_message()
    out = {
        "text": "".join(texts),
        "first_text_s": first_text,
        "end_s": time.monotonic() - started,
        "output_tokens": final.usage.output_tokens,
    }
elif mode == "wrong-token":
    wrong = anthropic.Anthropic(
        base_url=os.environ["RELAY_BASE_URL"], api_key="agr-not-the-token-0000000000000000", max_retries=0
    )
    try:
        wrong.messages.create(model=model, max_tokens=64, messages=messages)
        out = {"status": 200}
    except anthropic.APIStatusError as err:
        out = {"status": err.status_code, "type": type(err).__name__}
else:
    sys.exit(f"unknown mode {mode}")

print(json.dumps(out))
