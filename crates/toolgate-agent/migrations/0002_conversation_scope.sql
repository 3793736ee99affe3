-- The scope a conversation was started with: the role, toolset, domains and
-- tenant of its caller, as canonical JSON (`ConversationStore::create`). A
-- continuation from another scope (a narrower key of the same user) is
-- refused, so what one scope's tools returned never reaches another's model
-- context. Conversations stored before this migration have none and can no
-- longer be continued.
ALTER TABLE agent_conversations ADD COLUMN scope TEXT;
