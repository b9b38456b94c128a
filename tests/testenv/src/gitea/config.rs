//! The files a fresh Gitea needs to start unattended: app.ini and git's identity.

use std::io::Read;
use std::path::Path;

use crate::{Result, io};

/// Directories of one Gitea instance, all under its temp dir.
pub(super) struct Layout<'a> {
    pub work: &'a Path,
    pub assets: &'a Path,
    pub port: u16,
    /// The loopback SMTP port Gitea sends its mail to (a [`crate::mailpit::Mailpit`]).
    pub smtp_port: u16,
}

impl Layout<'_> {
    /// Gitea's default config path when `GITEA_CUSTOM` is `<work>/custom`, so the CLI finds it
    /// without flags.
    pub fn app_ini(&self) -> std::path::PathBuf {
        self.work.join("custom/conf/app.ini")
    }

    /// Gitea runs git with HOME here (the default `[git] HOME_PATH`); the process gets it too,
    /// so nothing reads or writes the real home.
    pub fn home(&self) -> std::path::PathBuf {
        self.work.join("data/home")
    }

    pub fn write(&self) -> Result<()> {
        let ini = self.app_ini();
        std::fs::create_dir_all(ini.parent().expect("app.ini has a parent"))
            .and_then(|()| std::fs::create_dir_all(self.home()))
            .map_err(io("creating Gitea's directories"))?;
        std::fs::write(&ini, self.app_ini_text()?).map_err(io("writing app.ini"))?;
        std::fs::write(
            self.home().join(".gitconfig"),
            "[user]\n\tname = Gitea\n\temail = gitea@example.com\n",
        )
        .map_err(io("writing Gitea's .gitconfig"))
    }

    fn app_ini_text(&self) -> Result<String> {
        let (work, assets, port) = (self.work.display(), self.assets.display(), self.port);
        let smtp_port = self.smtp_port;
        // JWT_SECRET is left out on purpose: Gitea generates it and writes it back into this file.
        // Root is allowed because CI runs as root. Webhooks may only reach loopback, where the
        // tests listen. OFFLINE_MODE and the disabled update checker keep Gitea off the internet.
        // SQLite waits up to 30 s for a lock rather than Gitea's 500 ms, and logs ahead (WAL): with
        // several suites pushing at once on two loaded cores, a write that found the database
        // locked for longer failed (a push's update, and the webhook it sends).
        // Mail goes over plain SMTP to the loopback Mailpit, notifications included (each user has
        // an address, `<login>@example.com`). Gitea queues each mail; its default queue (LevelDB)
        // polls when empty with a back-off of up to 2 s, an in-memory channel hands the mail to
        // the sender at once (a mail still queued when Gitea stops is lost: nothing waits for it).
        // HELO names localhost rather than the machine.
        Ok(format!(
            r#"WORK_PATH = {work}
RUN_MODE = prod
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = {port}
ROOT_URL = http://127.0.0.1:{port}/
APP_DATA_PATH = {work}/data
STATIC_ROOT_PATH = {assets}
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
OFFLINE_MODE = true

[database]
DB_TYPE = sqlite3
PATH = {work}/data/gitea.db
SQLITE_TIMEOUT = 30000
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = {work}/data/repositories

[indexer]
ISSUE_INDEXER_TYPE = db

[security]
INSTALL_LOCK = true
SECRET_KEY = {secret_key}
INTERNAL_TOKEN = {internal_token}

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false
NO_REPLY_ADDRESS = noreply.localhost
ENABLE_NOTIFY_MAIL = true

[mailer]
ENABLED = true
PROTOCOL = smtp
SMTP_ADDR = 127.0.0.1
SMTP_PORT = {smtp_port}
FROM = Gitea <gitea@example.com>
HELO_HOSTNAME = localhost

[queue.mail]
TYPE = channel

[webhook]
ALLOWED_HOST_LIST = loopback

[cron.update_checker]
ENABLED = false

[log]
MODE = console
LEVEL = Warn
"#,
            secret_key = random_hex()?,
            internal_token = random_hex()?,
        ))
    }
}

/// 32 random bytes as hex: each instance gets its own secrets.
fn random_hex() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(io("reading /dev/urandom"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
