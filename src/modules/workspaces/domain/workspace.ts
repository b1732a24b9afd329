import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { isIanaTimeZone, TIMEZONE_RULE } from '../../../core/time/iana-time-zone';

export interface WorkspaceSettings {
  /**
   * Role given to new members when the signup names none: the id of the actual default
   * role (bootstrap names User). Null only in workspaces created before that rule, where
   * it means the built-in User role.
   */
  defaultMemberRoleId: number | null;
  timezone: string;
  features: Record<string, boolean>;
  /**
   * Assistant SMS written inside this daily window (local times of the recipient member's
   * time zone, else the workspace's) waits for its end; absent or null: no quiet hours.
   */
  smsQuietHours?: SmsQuietHours | null;
}

/** A daily window of local wall-clock times (`HH:MM` or `HH:MM:SS`); start after end spans midnight. */
export interface SmsQuietHours {
  start: string;
  end: string;
}

const LOCAL_TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;

/** Seconds after local midnight of `HH:MM[:SS]`, or undefined when it is not such a time. */
export function secondsOfLocalTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = LOCAL_TIME.exec(value);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0) : undefined;
}

const QUIET_FIELDS = ['start', 'end'];

function checkQuietHours(value: unknown): void {
  if (value === null || value === undefined) return;
  const field = 'settings.smsQuietHours';
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ValidationError(`${field}: must be an object {start, end} or null`);
  const unknown = Object.keys(value).find((k) => !QUIET_FIELDS.includes(k));
  if (unknown !== undefined) throw new ValidationError(`${field}.${unknown}: unknown field`);
  const q = value as Record<string, unknown>;
  const seconds: Record<string, number> = {};
  for (const k of QUIET_FIELDS) {
    if (q[k] === undefined || q[k] === null) throw new ValidationError(`${field}.${k}: required`);
    const s = secondsOfLocalTime(q[k]);
    if (s === undefined)
      throw new ValidationError(
        `${field}.${k}: must be a local time HH:MM or HH:MM:SS from 00:00 to 23:59:59`,
      );
    seconds[k] = s;
  }
  if (seconds.start === seconds.end)
    throw new ValidationError(`${field}.end: must differ from start (an empty or all-day window)`);
}

export const DEFAULT_SETTINGS: WorkspaceSettings = {
  defaultMemberRoleId: null,
  timezone: 'UTC',
  features: {},
};

export type WorkspaceEvent =
  | {
      type: 'WorkspaceCreated';
      data: { workspaceId: string; name: string; settings: WorkspaceSettings; createdAt: string };
    }
  | {
      type: 'WorkspaceUpdated';
      data: { workspaceId: string; name?: string; settings?: Partial<WorkspaceSettings>; updatedAt: string };
    };

export type WorkspaceCommand =
  | {
      type: 'CreateWorkspace';
      workspaceId: string;
      name: string;
      settings?: Partial<WorkspaceSettings>;
      now: string;
    }
  | {
      type: 'UpdateWorkspace';
      workspaceId: string;
      name?: string;
      settings?: Partial<WorkspaceSettings>;
      now: string;
    };

export interface WorkspaceState {
  exists: boolean;
  name: string;
  settings: WorkspaceSettings;
}

export const streamOf = (workspaceId: string): string => `workspace-${workspaceId}`;

export const WORKSPACE_NAME_MAX = 200;

/**
 * The workspace name rule, enforced here for every path that names a workspace (HTTP,
 * bootstrap); the DTO only documents the limit (OpenAPI) from the same constant.
 */
export function checkWorkspaceName(name: string | undefined): void {
  if (name === undefined) return;
  if (!name.trim()) throw new ValidationError('name: must not be empty');
  if (name.length > WORKSPACE_NAME_MAX)
    throw new ValidationError(`name: must be at most ${WORKSPACE_NAME_MAX} characters`);
}

function checkSettings(settings: Partial<WorkspaceSettings> | undefined): void {
  if (settings?.timezone !== undefined && !isIanaTimeZone(settings.timezone))
    throw new ValidationError(`settings.timezone: ${TIMEZONE_RULE}`);
  checkQuietHours(settings?.smsQuietHours);
}

export const workspaceDecider: Decider<WorkspaceState, WorkspaceCommand, WorkspaceEvent> = {
  initialState: () => ({ exists: false, name: '', settings: DEFAULT_SETTINGS }),

  evolve(state, event) {
    switch (event.type) {
      case 'WorkspaceCreated':
        return { exists: true, name: event.data.name, settings: event.data.settings };
      case 'WorkspaceUpdated':
        return {
          exists: true,
          name: event.data.name ?? state.name,
          settings: { ...state.settings, ...event.data.settings },
        };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateWorkspace': {
        if (state.exists) throw new ConflictError('A workspace with this id already exists');
        checkWorkspaceName(command.name);
        checkSettings(command.settings);
        return [
          {
            type: 'WorkspaceCreated',
            data: {
              workspaceId: command.workspaceId,
              name: command.name.trim(),
              settings: { ...DEFAULT_SETTINGS, ...command.settings },
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateWorkspace': {
        if (!state.exists) throw new NotFoundError('Workspace not found');
        checkWorkspaceName(command.name);
        checkSettings(command.settings);
        const name = command.name?.trim();
        const changedName = name !== undefined && name !== state.name ? name : undefined;
        const changedSettings = Object.fromEntries(
          Object.entries(command.settings ?? {}).filter(
            ([k, v]) => JSON.stringify(state.settings[k as keyof WorkspaceSettings]) !== JSON.stringify(v),
          ),
        ) as Partial<WorkspaceSettings>;
        const hasSettings = Object.keys(changedSettings).length > 0;
        if (changedName === undefined && !hasSettings) return [];
        return [
          {
            type: 'WorkspaceUpdated',
            data: {
              workspaceId: command.workspaceId,
              ...(changedName !== undefined ? { name: changedName } : {}),
              ...(hasSettings ? { settings: changedSettings } : {}),
              updatedAt: command.now,
            },
          },
        ];
      }
    }
  },
};
