import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * The app.ini of a test Gitea: installed already (no install page), SQLite, loopback only, no
 * registration, no mail, no SSH, offline (no avatars or fonts from the Internet), webhooks allowed to
 * loopback (where the controller's receiver listens in the tests), and nothing that starts slow work in
 * the background (indexers, cron, Actions, packages). Logs go to the console, which the harness sends
 * to a file, at warning level.
 */
export function giteaIni(options: { workDir: string; staticRoot: string; port: number }): string {
  const { workDir, staticRoot, port } = options;
  const sections: Record<string, Record<string, string | number | boolean>> = {
    '': {
      APP_NAME: 'applyset test forge',
      RUN_MODE: 'prod',
      WORK_PATH: workDir,
      // Gitea refuses to run as root unless told; CI and these machines run the tests as root.
      I_AM_BEING_UNSAFE_RUNNING_AS_ROOT: process.getuid?.() === 0,
    },
    server: {
      PROTOCOL: 'http',
      HTTP_ADDR: '127.0.0.1',
      HTTP_PORT: port,
      ROOT_URL: `http://127.0.0.1:${port}/`,
      LOCAL_ROOT_URL: `http://127.0.0.1:${port}/`,
      DISABLE_SSH: true,
      START_SSH_SERVER: false,
      OFFLINE_MODE: true,
      LFS_START_SERVER: false,
      STATIC_ROOT_PATH: staticRoot,
      APP_DATA_PATH: path.join(workDir, 'data'),
    },
    database: { DB_TYPE: 'sqlite3', PATH: path.join(workDir, 'data', 'gitea.db') },
    repository: { ROOT: path.join(workDir, 'repositories'), DEFAULT_BRANCH: 'main' },
    security: {
      INSTALL_LOCK: true,
      SECRET_KEY: randomBytes(32).toString('hex'),
      MIN_PASSWORD_LENGTH: 8,
      PASSWORD_COMPLEXITY: 'off',
    },
    service: {
      DISABLE_REGISTRATION: true,
      REQUIRE_SIGNIN_VIEW: true,
      ENABLE_NOTIFY_MAIL: false,
      DEFAULT_KEEP_EMAIL_PRIVATE: true,
    },
    mailer: { ENABLED: false },
    webhook: { ALLOWED_HOST_LIST: 'loopback', DELIVER_TIMEOUT: 10 },
    oauth2: { ENABLED: false },
    indexer: { ISSUE_INDEXER_TYPE: 'db', REPO_INDEXER_ENABLED: false },
    queue: { TYPE: 'channel' },
    cron: { ENABLED: false },
    'cron.update_checker': { ENABLED: false },
    actions: { ENABLED: false },
    packages: { ENABLED: false },
    session: { PROVIDER: 'memory' },
    cache: { ADAPTER: 'memory' },
    log: { MODE: 'console', LEVEL: 'Warn', ROOT_PATH: path.join(workDir, 'log') },
    'git.timeout': { DEFAULT: 60 },
  };
  return Object.entries(sections)
    .map(([name, values]) => {
      const lines = Object.entries(values).map(([key, value]) => `${key} = ${String(value)}`);
      return [...(name === '' ? [] : [`[${name}]`]), ...lines, ''].join('\n');
    })
    .join('\n');
}
