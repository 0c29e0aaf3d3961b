"""The intent labels the LLM engine scores a question against (`intent_labels` setting): a
label with a `reply` answers with it; the one without goes on to retrieval and generation."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class IntentLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    reply: str | None = None  # None: the label goes on to retrieval and generation


DEFAULT_LABELS = [
    IntentLabel(name="finance_question",
                description="finance question, e.g. 'What was the revenue in 2019?', "
                            "'How much did operating costs change?'"),
    IntentLabel(name="small_talk",
                description="small talk, e.g. 'hello', 'hi there, how are you?', "
                            "'thanks a lot!', 'good morning'",
                reply="Hello! Ask me a question about the company's financial reports."),
    IntentLabel(name="out_of_scope",
                description="out of scope, e.g. 'Write a poem', "
                            "'What is the capital of Spain?', 'Who won the match?'",
                reply="Sorry, I can only answer questions about the company's financial "
                      "reports."),
]
