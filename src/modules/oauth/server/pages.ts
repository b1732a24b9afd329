import { scopeInWords } from '../domain/oauth-scopes';

/**
 * The authorization server's pages, rendered on the server without scripts. Everything
 * interpolated is escaped; the forms carry the authorization request as hidden fields and
 * a CSRF field.
 */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input,select{width:100%;padding:.4rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.5rem 1rem}.error{color:#a00}li{margin:.3rem 0}</style>
</head><body>${body}</body></html>`;
}

function hidden(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
}

export function signInPage(opts: {
  action: string;
  appName: string;
  params: Record<string, string>;
  csrf: string;
  email?: string;
  error?: string;
}): string {
  return layout(
    'Sign in',
    `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(opts.appName)}</strong></p>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="${escapeHtml(opts.action)}">
${hidden(opts.params)}
<input type="hidden" name="csrf_token" value="${escapeHtml(opts.csrf)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(opts: {
  action: string;
  appName: string;
  scopes: readonly string[];
  workspaces: readonly { id: string; name: string }[];
  params: Record<string, string>;
  csrf: string;
}): string {
  const choice = opts.workspaces.length
    ? `<label for="workspace_id">Workspace</label><select id="workspace_id" name="workspace_id">
${opts.workspaces.map((w) => `<option value="${escapeHtml(w.id)}">${escapeHtml(w.name)}</option>`).join('\n')}
</select>`
    : '<p class="error">You are not a member of any workspace this application could use.</p>';
  return layout(
    'Authorize application',
    `<h1>Authorize ${escapeHtml(opts.appName)}</h1>
<p><strong>${escapeHtml(opts.appName)}</strong> asks to act for you in one workspace. It will be able to:</p>
<ul>${opts.scopes.map((s) => `<li>${escapeHtml(scopeInWords(s))} <small>(${escapeHtml(s)})</small></li>`).join('')}</ul>
<p>It never gets more than your own role allows.</p>
<form method="post" action="${escapeHtml(opts.action)}">
${hidden(opts.params)}
<input type="hidden" name="csrf_token" value="${escapeHtml(opts.csrf)}">
${choice}
${opts.workspaces.length ? '<button type="submit" name="decision" value="approve">Approve</button>' : ''}
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(message: string): string {
  return layout(
    'Authorization error',
    `<h1>This request cannot be completed</h1><p class="error">${escapeHtml(message)}</p>`,
  );
}
