import { describe, expect, it } from 'vitest';
import { editorUrl, isEditor } from './editor-link.js';

describe('open-in-editor links', () => {
  it("is VS Code's vscode://file/<abs path>:<line>", () => {
    expect(editorUrl('vscode', '/work/job/launch.py', 59)).toBe('vscode://file/work/job/launch.py:59');
    expect(editorUrl('cursor', '/srv/a.py', 1)).toBe('cursor://file/srv/a.py:1');
  });

  it('percent-encodes each path segment: spaces, #, ?, non-ASCII', () => {
    expect(editorUrl('vscode', '/home/me/my job/#1?.py', 7)).toBe('vscode://file/home/me/my%20job/%231%3F.py:7');
    expect(editorUrl('vscode', '/data/réplica.py', 3)).toBe('vscode://file/data/r%C3%A9plica.py:3');
  });

  it('takes a Windows drive path with either separator', () => {
    expect(editorUrl('vscode', 'C:\\jobs\\train.py', 12)).toBe('vscode://file/C:/jobs/train.py:12');
    expect(editorUrl('vscode', 'd:/jobs/train.py', 12)).toBe('vscode://file/d:/jobs/train.py:12');
  });

  it('refuses a relative path, a "..", control characters and a line that is not one', () => {
    expect(editorUrl('vscode', 'launch.py', 59)).toBeNull();
    expect(editorUrl('vscode', '/work/../etc/passwd', 1)).toBeNull();
    expect(editorUrl('vscode', '/work/a\nb.py', 1)).toBeNull();
    expect(editorUrl('vscode', '/work/a.py', 0)).toBeNull();
    expect(editorUrl('vscode', '/work/a.py', 1.5)).toBeNull();
  });

  it('knows its editors', () => {
    expect(isEditor('vscode-insiders')).toBe(true);
    expect(isEditor('emacs')).toBe(false);
  });
});
