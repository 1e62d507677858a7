// The application menu as data: main.ts passes it to Menu.buildFromTemplate. Commands go to the renderer.

import type { MenuItemConstructorOptions } from 'electron';
import type { MenuCommand, RecentSession } from './host-api.js';

export function buildMenuTemplate(
  platform: NodeJS.Platform,
  send: (command: MenuCommand) => void,
  recent: RecentSession[],
  openRecent: (index: number) => void,
): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin';
  const cmd = (label: string, command: MenuCommand, accelerator?: string): MenuItemConstructorOptions => ({
    label,
    ...(accelerator ? { accelerator } : {}),
    click: () => send(command),
  });
  const recentItems: MenuItemConstructorOptions[] =
    recent.length === 0
      ? [{ label: 'No recent sessions', enabled: false }]
      : recent.map((r, i) => ({ label: r.label, click: () => openRecent(i) }));

  const file: MenuItemConstructorOptions = {
    label: 'File',
    submenu: [
      cmd('Open Dumps…', 'open-files', 'CmdOrCtrl+O'),
      cmd('Open Folder…', 'open-folder', 'CmdOrCtrl+Shift+O'),
      { label: 'Open Recent', submenu: recentItems },
      cmd('Open Sample Series', 'open-sample'),
      cmd('Open Session or Report…', 'open-session'),
      { type: 'separator' },
      cmd('Save Session', 'save-session', 'CmdOrCtrl+S'),
      cmd('Save Session As…', 'save-session-as', 'CmdOrCtrl+Shift+S'),
      { type: 'separator' },
      cmd('Export Report (HTML)…', 'export-report', 'CmdOrCtrl+R'),
      cmd('Export pprof…', 'export-pprof'),
      cmd('Export Folded Stacks…', 'export-folded'),
      cmd('Export speedscope…', 'export-speedscope'),
      cmd('Export Tables as JSON…', 'export-json', 'CmdOrCtrl+E'),
      cmd('Export View as PNG…', 'export-png', 'CmdOrCtrl+Shift+E'),
      { type: 'separator' },
      cmd('Close Job', 'close-job', 'CmdOrCtrl+W'),
      ...(mac
        ? []
        : [{ type: 'separator' } as MenuItemConstructorOptions, { role: 'quit' } as MenuItemConstructorOptions]),
    ],
  };
  const edit: MenuItemConstructorOptions = {
    label: 'Edit',
    submenu: [
      { role: 'copy' },
      { role: 'selectAll' },
      { type: 'separator' },
      cmd('Find in View', 'find', 'CmdOrCtrl+F'),
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: 'View',
    submenu: [
      cmd('Processes', 'view-processes', 'CmdOrCtrl+1'),
      cmd('Timeline', 'view-timeline', 'CmdOrCtrl+2'),
      cmd('Growth', 'view-growth', 'CmdOrCtrl+3'),
      cmd('Flame Graph', 'view-flame', 'CmdOrCtrl+4'),
      cmd('Diff Flame Graph', 'view-diff', 'CmdOrCtrl+5'),
      cmd('Notes', 'notes', 'CmdOrCtrl+6'),
      { type: 'separator' },
      cmd('Reset Zoom', 'zoom-reset', 'CmdOrCtrl+0'),
      cmd('Toggle Dark Theme', 'toggle-theme', 'CmdOrCtrl+Shift+D'),
      { type: 'separator' },
      { role: 'togglefullscreen' },
      { role: 'toggleDevTools' },
    ],
  };
  const windowMenu: MenuItemConstructorOptions = { role: 'windowMenu' };
  const help: MenuItemConstructorOptions = {
    role: 'help',
    submenu: [{ label: 'heaplens works offline: it makes no network requests', enabled: false }],
  };
  const appMenu: MenuItemConstructorOptions[] = mac ? [{ role: 'appMenu' }] : [];
  return [...appMenu, file, edit, view, windowMenu, help];
}
