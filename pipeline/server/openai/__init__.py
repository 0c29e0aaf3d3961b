"""The OpenAI-compatible API's own pieces, with OpenAI's and vLLM's names and shapes: the
request and answer models of /v1 (`openai_models`), what differs between chat and legacy
completion answers (`openai_formats`), and the choices, log-probabilities and usage built
from engine outputs (`openai_outputs`). The router that serves them is routes/openai.py."""
