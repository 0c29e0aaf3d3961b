"""One router per route family: `ask` (/ask, /search), `openai` (/v1/*), `ops` (/health,
/metrics, the web page)."""
