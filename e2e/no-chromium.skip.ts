// Run in place of the browser specs when Debian's chromium is missing (playwright.config.ts): one skipped test whose
// title (what the list reporter prints) says what to install, instead of every spec failing on a browser Playwright
// would have to download.
import { test } from '@playwright/test';

const where = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
test.skip(`browser tests skipped, no Chromium at ${where}: apt-get install chromium (or set CHROMIUM_PATH)`, () => {});
