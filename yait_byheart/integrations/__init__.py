"""Framework integrations, one module each; each imports its framework only when used.

- ``yait_byheart.integrations.openai_agents``: a ``Session`` for the OpenAI Agents SDK
  (``pip install '.[openai-agents]'``);
- ``yait_byheart.integrations.pydantic_ai``: a history processor for Pydantic AI
  (``[pydantic-ai]``);
- ``yait_byheart.integrations.langchain``: a chat message history and a LangGraph
  ``pre_model_hook`` (``[langchain]``);
- ``yait_byheart.integrations.google_adk``: a plugin, a session service and a memory service
  for Google ADK (``[google-adk]``);
- ``yait_byheart.integrations.llama_index``: a ``BaseMemory`` for LlamaIndex
  (``[llama-index]``);
- ``yait_byheart.integrations.strands``: model-input middleware and a session repository
  for Strands Agents (``[strands]``).

This package imports none of them; see docs/agents.md.
"""
