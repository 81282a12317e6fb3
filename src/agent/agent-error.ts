// Errors of the node agent, each with a stable code so the glue and the tests can tell them apart.

export type AgentErrorCode =
  | 'AGENT_IP_EXHAUSTED'
  | 'AGENT_BAD_STATE_FILE'
  | 'AGENT_BAD_POD'
  | 'AGENT_CONFIG'
  | 'AGENT_LOG_NOT_FOUND'
  | 'AGENT_STOPPED';

export class AgentError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}
