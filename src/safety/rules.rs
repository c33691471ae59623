//! The rules: what each looks for, how bad it is, and what the person should do about it.
//!
//! Most rules are patterns over one logical line ([`RULES`]); a few need more than a pattern —
//! a secret read on one line and sent on the next, a file downloaded and then run, a key shape
//! that is only a placeholder — and are functions below. Every match passes through [`emit`],
//! which applies the context: a command shown as what not to do is `low`, an instruction that
//! the text discusses rather than gives is `low`, and anything hidden in an HTML comment is at
//! least `high`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Regex, RegexSet, RegexSetBuilder};

use super::document::{is_negated_context, Document, Line};
use super::{ascii_word_boundaries, excerpt, regex, Category, RawFinding, Risk};

/// How a rule's match depends on its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A command: shown as what not to do, it is a warning, not an instruction.
    Command,
    /// Words addressed to the agent: quoted in a discussion of attacks, they are not an attack.
    Instruction,
    /// Harmful wherever it stands (a key, a reverse shell).
    Always,
}

struct Rule {
    id: &'static str,
    category: Category,
    risk: Risk,
    /// Risk inside a code block, when it differs (fake chat markup is data in a code sample).
    code_risk: Option<Risk>,
    context: Context,
    patterns: &'static [&'static str],
    message: &'static str,
}

use Category::*;
use Context::*;

const PIPE_TO_SHELL: &str = "download-execute.pipe-to-shell";

/// Installers that vendors publish as `curl … | sh`; the pattern is still risky, but no
/// stranger's code: `medium`, so it does not bury real findings.
const KNOWN_INSTALLERS: &[&str] = &[
    "https://sh.rustup.rs",
    "https://get.docker.com",
    "https://raw.githubusercontent.com/Homebrew/install/",
    "https://deb.nodesource.com/",
    "https://astral.sh/uv/",
    "https://install.python-poetry.org",
    "https://bun.sh/install",
    "https://deno.land/install.sh",
    "https://get.pnpm.io/",
    "https://raw.githubusercontent.com/nvm-sh/nvm/",
    "https://nixos.org/nix/install",
    "https://get.sdkman.io",
];

/// What a rule's match means less than its rule says, by what else the line holds.
enum Mitigation {
    NotAFinding,
    Lower(Risk, &'static str),
}

static OFFICIAL_INDEX: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)https://(pypi\.org/simple|files\.pythonhosted\.org|registry\.npmjs\.org)\b")
        .expect("compiles")
});
static LOCAL_DATABASE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(localhost|127\.0\.0\.1|\w+_test|test_\w+|\w+_dev|dev_\w+)\b").expect("compiles")
});

fn mitigation(rule: &str, text: &str) -> Option<Mitigation> {
    match rule {
        PIPE_TO_SHELL if from_known_installer(text) => Some(Mitigation::Lower(
            Risk::Medium,
            "runs a vendor's installer straight from the network: it is a well-known installer, but prefer the package manager, or download it, check it and run the file",
        )),
        "download-execute.custom-index" if OFFICIAL_INDEX.is_match(text) => {
            Some(Mitigation::NotAFinding)
        }
        "destructive.database" if LOCAL_DATABASE.is_match(text) => Some(Mitigation::Lower(
            Risk::Medium,
            "destroys a database that looks local or a test one: make sure it is, and that nothing else uses it",
        )),
        _ => None,
    }
}

/// Whether the line's only URL is a known installer's (a second URL could be the real one).
fn from_known_installer(text: &str) -> bool {
    let mut urls = text.match_indices("://");
    let (Some((first, _)), None) = (urls.next(), urls.next()) else {
        return false;
    };
    // The scheme starts after the last character that is not an ASCII letter.
    let start = text[..first]
        .char_indices()
        .rfind(|(_, c)| !c.is_ascii_alphabetic())
        .map_or(0, |(i, c)| i + c.len_utf8());
    KNOWN_INSTALLERS
        .iter()
        .any(|url| text[start..].starts_with(url))
}

/// The pattern rules. Patterns are case-insensitive where they start with `(?i)`.
const RULES: &[Rule] = &[
    // Prompt injection and role hijack.
    Rule {
        id: "injection.ignore-instructions",
        category: PromptInjection,
        risk: Risk::Critical,
        code_risk: None,
        context: Instruction,
        patterns: &[concat!(
            r"(?i)\b(ignore|disregard|forget|override|bypass)\s+(\w+\s+){0,3}?",
            r"(previous|prior|above|earlier|preceding|system|original|initial|safety|your|developer'?s?|operator'?s?|user'?s?)\s+",
            r"(\w+\s+){0,2}?(instructions?|rules|guidelines|prompts?|directives|directions|guardrails|policies|constraints|restrictions)\b"
        ),
        r"(?i)\b(safety|system)\s+(guidance|instructions|prompt|rules|polic(y|ies))\b[^.]{0,80}\b(no\s+longer\s+appl(y|ies)|(is|are)\s+(outdated|obsolete|void|superseded|suspended)|predates)\b",
        ],
        message: "tells the agent to set aside its instructions, the mark of a prompt injection: delete the sentence; a skill never needs it",
    },
    Rule {
        id: "injection.conceal-from-user",
        category: PromptInjection,
        risk: Risk::High,
        code_risk: None,
        context: Instruction,
        patterns: &[
            concat!(
                r"(?i)\b(do\s+not|don'?t|never|without)\s+(tell|inform|mention|notify|alert|reveal|disclos|let|bring)\w*\s+",
                r"(\w+\s+){0,6}?(up\s+)?(to\s+|with\s+)?(the\s+)?(user|human|person|operator|owner|anyone)\b"
            ),
            r"(?i)\bkeep\s+(it|them|this|these)\s+out\s+of\s+(the\s+|your\s+)?(\w+\s+)?(summary|report|reply|answer|log)\b",
            r"(?i)\bno\s+need\s+to\s+(mention|tell|inform|report)\b|\bthe\s+user\s+(is|must|should)\s+not\s+(to\s+)?(learn|know|find\s+out|be\s+told|see)\b",
            r"(?i)\b(whatever|regardless\s+of|no\s+matter\s+what)\b[^.]{0,60}\b(tell|report|say)\b[^.]{0,30}\b(passed|succeeded|green|fine)\b",
            r"(?i)\b(secretly|covertly|without\s+the\s+user'?s?\s+(knowledge|knowing)|behind\s+the\s+user'?s\s+back|keep\s+(this|it)\s+(secret|hidden)\s+from|hide\s+(this|it)\s+from\s+the\s+user)\b",
        ],
        message: "asks the agent to hide what it does from the person: delete it; a skill that must be hidden is not one to install",
    },
    Rule {
        id: "injection.fake-system-text",
        category: PromptInjection,
        risk: Risk::High,
        code_risk: Some(Risk::Medium),
        context: Instruction,
        patterns: &[
            r"(?i)<\|\s*(im_start|im_end|system|endoftext)\s*\|>|</?\s*(system|system_prompt|sys)\s*>|\[/?(system|inst|sys)\]|<<\s*/?sys\s*>>",
            r"(?i)^\W*(system|developer)\s+(message|override|instruction|notice|update)\s*:",
            r"(?i)\b(begin|end|new|updated)\s+(system|developer)\s+(prompt|message|instructions?)\b",
            r"(?i)\bsystem\s+(override|administrator\s+notice)\b",
        ],
        message: "imitates system or policy text so the agent takes it for its operator's words: delete it; a skill speaks only as a skill",
    },
    Rule {
        id: "injection.role-hijack",
        category: PromptInjection,
        risk: Risk::High,
        code_risk: None,
        context: Instruction,
        patterns: &[
            r"(?i)\byou\s+are\s+now\s+(an?\s+|in\s+)?(\w+\s+)?(assistant|agent|ai|model|mode|unrestricted|jailbroken|root|admin|dan|free)\b",
            r"(?i)\bfrom\s+(now|this\s+point)\s+(on|forward),?\s+you\s+(are|will\s+act|must\s+act|act)\b|\bfrom\s+now\s+on,?\s+you\s+are\b",
            r"(?i)\b(has|have|with)\s+no\s+(content\s+)?(restrictions|filters|guardrails)\b|\bnever\s+refuses?\b",
            r"(?i)\b(overrides?|supersedes?)\s+the\s+user'?s?\s+(requests?|instructions?|wishes)\b",
            r"(?i)\b(act|behave)\s+as\s+(an?\s+)?(unrestricted|jailbroken|unfiltered|uncensored)\b|\bdeveloper\s+mode\s+(enabled|on)\b|\bDAN\s+mode\b",
            r"(?i)\bthis\s+(skill|instruction|message|file)\s+(overrides|supersedes|takes\s+precedence\s+over)\b",
            r"(?i)\btreat\s+(the\s+)?(text|content|contents|body|words)\s+(of|in|from)\b[^.]{0,80}\bas\s+(instructions|commands|directives|orders)\b",
            r"(?i)\b(with\s+)?the\s+same\s+authority\s+as\s+(this\s+skill|the\s+user|your\s+(user|operator))\b",
            r"(?i)\b(authori[sz]ed|approved|mandated)\s+by\s+(anthropic|openai|the\s+system|your\s+(developer|operator|creator))\b",
        ],
        message: "tries to give the agent a new identity or authority: delete it; a skill describes a task, it does not re-define the agent",
    },
    Rule {
        id: "injection.hidden-html",
        category: PromptInjection,
        risk: Risk::High,
        code_risk: Some(Risk::Low),
        context: Always,
        patterns: &[
            r#"(?i)<[a-z]+[^>]*\bstyle\s*=\s*["'][^"']*(display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0)"#,
            r#"(?i)<(div|span|p|section)\b[^>]*\s(hidden|aria-hidden\s*=\s*["']true)"#,
        ],
        message: "hides text from a person reading the rendered skill while the agent still reads it: delete the hidden element, or make its text visible",
    },
    // Download and execute.
    Rule {
        id: PIPE_TO_SHELL,
        category: DownloadExecute,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\b(curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^|\n]*(://|\$\{?\w|\w\.\w)[^|\n]*\|\s*(sudo\s+(-\S+\s+)*)?(env\s+\S+=\S+\s+)*((ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|source)\b",
            r"(?i)\b(ba|z|k)?sh\s+<\(\s*(curl|wget)\b|\b(source|\.)\s+<\(\s*(curl|wget)\b",
            r#"(?i)\b(ba|z)?sh\s+-c\s+["']?\$\(\s*(curl|wget)\b|\beval\s+["']?\$\(\s*(curl|wget)\b"#,
            r"(?i)\b(iex|invoke-expression)\b[^\n]*(downloadstring|iwr|irm|invoke-webrequest|invoke-restmethod|net\.webclient)",
            r"(?i)\bexec\s*\(\s*(requests\.get|urllib\.request\.urlopen|urlopen)\s*\(",
        ],
        message: "runs code straight from the network, unseen and unpinned: download it to a file, check its sha256 against a published one, read it, then run that file",
    },
    Rule {
        id: "download-execute.custom-index",
        category: DownloadExecute,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bpip[0-9.]*\s+install\b[^\n]*(--index-url|--extra-index-url|\s-i)\s*=?\s*https?://",
            r"(?i)\bnpm\s+(i|install|add)\b[^\n]*--registry\s*=?\s*https?://",
            r"(?i)(^|\\n|\s|['\x22])(extra-index-url|index-url|extra_index_url|index_url|registry)\s*=\s*['\x22]?(sparse\+)?https?://",
            r"(?i)\breplace-with\s*=",
        ],
        message: "installs packages from a package index other than the official one, where any name can be taken by anyone: install from the official index, or pin exact versions with hashes",
    },
    // Destructive commands.
    Rule {
        id: "destructive.wipe-disk",
        category: Destructive,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bdd\b[^\n]*\bof=/dev/(sd|hd|nvme|disk|mmcblk|vd|xvd)",
            r"(?i)\b(mkfs(\.\w+)?|wipefs|shred)\b[^\n]*\s/dev/",
            r"(?i)>\s*/dev/(sd[a-z]|nvme\d|hd[a-z]|disk\d)",
            r"(?i)\bdiskutil\s+(erase\w*|zero\w*|secureErase)\b|\bformat\s+[a-z]:",
            r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",
        ],
        message: "erases a disk (or exhausts the machine): delete the command; no skill should ever do this on its own",
    },
    Rule {
        id: "destructive.find-delete",
        category: Destructive,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[r#"(?i)\bfind\s+["']?(/|~|\$HOME|\$\{HOME\})["']?\s[^\n]*(-delete\b|-exec\s+rm\b)"#],
        message: "deletes files across the whole system or home folder: limit it to the project's own folder",
    },
    Rule {
        id: "destructive.database",
        category: Destructive,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bdrop\s+(database|schema)\b|\bdropdb\b|\btruncate\s+(table\s+)?\w+|\bflushall\b|\bflushdb\b|\bdb\.dropDatabase\s*\(|\.drop_all\s*\(",
            r"(?i)\bdelete\s+from\s+[\w.]+\s*(;|$)",
        ],
        message: "destroys a database's data with no way back: delete it, or point it at a disposable test database named in the skill and take a backup first",
    },
    Rule {
        id: "destructive.cloud",
        category: Destructive,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bterraform\s+destroy\b[^\n]*-auto-approve",
            r"(?i)\bkubectl\s+delete\s+(ns|namespaces?)\b|\bkubectl\s+delete\b[^\n]*(--all\b|\s-A\b|--all-namespaces)",
            r"(?i)\baws\s+s3\s+(rm\b[^\n]*--recursive|rb\b[^\n]*--force)|\baws\s+ec2\s+terminate-instances\b|\baws\s+rds\s+delete-db-instance\b",
            r"(?i)\bgcloud\s+(projects|sql\s+instances)\s+delete\b|\baz\s+group\s+delete\b|\bheroku\s+apps:destroy\b",
        ],
        message: "deletes cloud resources without a person confirming: remove the auto-approval and the broad selector, and name the one resource meant",
    },
    Rule {
        id: "destructive.open-permissions",
        category: Destructive,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r#"(?i)\bchmod\s+(-\w+\s+)*(0?777|a\+rwx|ugo\+rwx)\s+["']?(/|~|\$HOME|/etc|/usr|/var)["']?(\s|$|/\s|/\*)"#,
            r#"(?i)\bchown\s+-R\b[^\n]*\s["']?(/|/etc|/usr)["']?(\s|$)"#,
        ],
        message: "opens up or takes over the permissions of the whole system or home folder: limit it to the one file that needs it",
    },
    // Privilege escalation and switched-off protections.
    Rule {
        id: "privilege.sudoers",
        category: PrivilegeEscalation,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\b(echo|printf|tee|cat)\b[^\n]*\bNOPASSWD\b|\bNOPASSWD\b[^\n]*(>>?|\btee\b)",
            r"(?i)(>>?|\btee\b[^\n|]*)\s*/etc/sudoers",
        ],
        message: "grants root without a password: delete it; a skill never changes who may use sudo",
    },
    Rule {
        id: "privilege.admin-group",
        category: PrivilegeEscalation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[r"(?i)\busermod\s+(-\w+\s+)*-a?G\s+(sudo|wheel|admin|root)\b|\bdscl\b[^\n]*admin\b"],
        message: "adds a user to the administrators: delete it; a person grants admin rights themselves",
    },
    Rule {
        id: "privilege.root-account",
        category: PrivilegeEscalation,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\b(useradd|adduser|usermod)\b[^\n]*\s-(o\s+-)?u\s*0\b",
            r"(?i)\bPermit(RootLogin|EmptyPasswords)\s+yes\b",
        ],
        message: "creates a second root account or opens root to SSH logins: delete it; nothing a skill does needs another root",
    },
    Rule {
        id: "privilege.cluster-admin",
        category: PrivilegeEscalation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[r"(?i)\bcreate\s+(cluster)?rolebinding\b[^\n]*--clusterrole[= ]cluster-admin\b"],
        message: "gives an account full control of the cluster: grant only the verbs and resources the task needs, in its own namespace",
    },
    Rule {
        id: "privilege.anonymous-access",
        category: PrivilegeEscalation,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[r"(?i)--(user|group)[= ]system:(anonymous|unauthenticated)\b"],
        message: "grants rights to anyone who can reach the cluster, without logging in: delete it",
    },
    Rule {
        id: "privilege.agent-permissions",
        category: PrivilegeEscalation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r#"(?i)"allow"\s*:\s*\[[^\]]*\b(Bash|Write|WebFetch|Edit)\(\*\)|--dangerously-skip-permissions|"yolo"\s*:\s*true"#,
            r"(?i)\bgh\s+pr\s+merge\b[^\n]*--admin\b",
        ],
        message: "lets the agent (or a merge) act without anyone's approval, past its permission prompts or a branch's protection: remove it; a person grants such rights themselves",
    },
    Rule {
        id: "privilege.setuid",
        category: PrivilegeEscalation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bchmod\s+(-\w+\s+)*([ugo]*\+[rwxt]*s[rwxt]*|[2467][0-7]{3})\s",
            r"(?i)\bsetcap\b[^\n]*cap_(setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module)",
        ],
        message: "makes a program run as its owner (setuid/setgid), a classic way to root: delete it",
    },
    Rule {
        id: "privilege.container-escape",
        category: PrivilegeEscalation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bdocker\s+run\b[^\n]*(--privileged|\s-v\s+/:/|--volume[= ]/:/|--pid[= ]host|--cap-add[= ](all|sys_admin))",
            r"(?i)\bnsenter\b[^\n]*-t\s+1\b|\bchroot\s+/host\b",
        ],
        message: "gives a container the host's root: drop --privileged and the host mounts, and mount only the project folder",
    },
    Rule {
        id: "privilege.disable-protection",
        category: PrivilegeEscalation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bsetenforce\s+0|\bufw\s+disable|\biptables\s+-F\b|\bsystemctl\s+(stop|disable|mask)\s+(firewalld|apparmor|auditd|ufw)\b",
            r"(?i)\bcsrutil\s+disable|\bspctl\s+--master-disable|Set-MpPreference\s+-Disable\w+|Add-MpPreference\s+-Exclusion",
            r"(?i)\bsysctl\b[^\n]*kernel\.(yama\.ptrace_scope|randomize_va_space)\s*=\s*0",
            r#"(?i)security\.workspace\.trust\.enabled"?\s*:\s*false"#,
        ],
        message: "switches off a protection of the machine (firewall, SELinux, antivirus): delete it; if a tool needs an exception, the person makes it",
    },
    Rule {
        id: "privilege.tls-verification-off",
        category: PrivilegeEscalation,
        risk: Risk::Medium,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bstrict-ssl\s*=\s*false|\bhttp\.sslVerify\s+false|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\x22]?0|PYTHONHTTPSVERIFY\s*=\s*0|\bnpm\s+config\s+set\s+strict-ssl\s+false",
        ],
        message: "turns off TLS certificate checks for everything that follows, so anyone on the network can answer: delete it and fix the certificate instead",
    },
    // Persistence that needs no more than a pattern.
    Rule {
        id: "persistence.preload",
        category: Persistence,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[r#"/etc/ld\.so\.preload|\bLD_PRELOAD["']?\s*[:=]|\bDYLD_INSERT_LIBRARIES["']?\s*[:=]"#],
        message: "loads a library into every program that starts: delete it",
    },
    // Obfuscation.
    Rule {
        id: "obfuscation.decode-and-run",
        category: Obfuscation,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\b(base64|b64)\s+(-\w+\s+)*(-d|--decode|-D)\b[^\n]*\|\s*(sudo\s+)?((ba|z|k)?sh|python[0-9.]*|perl|ruby|node|php|iex)\b",
            r"(?i)\beval\b[^\n]*\b(base64|b64decode|atob|fromhex|unhexlify|rot13|gunzip|zcat|xxd|openssl\s+enc)\b",
            r"(?i)\bexec\s*\(\s*(base64\.b64decode|codecs\.decode|bytes\.fromhex|binascii\.|zlib\.decompress|marshal\.loads|__import__\s*\(\s*['\x22](base64|zlib|codecs))",
            r"(?i)\b(eval|Function)\s*\(\s*(atob|Buffer\.from|unescape)\s*\(",
            r"(?i)\bpowershell(\.exe)?\b[^\n]*\s-(e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{16,}",
            r"(?i)\b(echo|printf)\s+(-e\s+)?['\x22]?(\\x[0-9a-f]{2}){4,}[^\n]*\|\s*((ba|z)?sh|python[0-9.]*)\b",
            r"(?i)\bxxd\s+-r\b[^\n]*\|\s*((ba|z)?sh|python[0-9.]*)\b|\|\s*rev\s*\|\s*(ba|z)?sh\b",
        ],
        message: "decodes hidden text and runs it, so no reader sees what runs: delete it; a skill writes its commands in plain text",
    },
    Rule {
        id: "obfuscation.assembled-command",
        category: Obfuscation,
        risk: Risk::Medium,
        code_risk: Some(Risk::High),
        context: Command,
        patterns: &[
            r#"(^|[;&|(]\s*)["']?\$\{?[A-Za-z_]\w*\}?["']?\$\{?[A-Za-z_]\w*\}?["']?\s"#,
            r#"(?i)\b(getattr\s*\(\s*)?__import__\s*\(\s*['"](os|subprocess|pty|socket)['"]\s*\)"#,
            r#"['"][a-z]{1,4}['"]\s*\+\s*['"][a-z]{1,4}['"]\s*\+\s*['"][a-z]{1,4}['"]"#,
        ],
        message: "builds a command from pieces so a reader cannot see what it is: write the command out in full",
    },
    Rule {
        id: "obfuscation.erase-traces",
        category: Obfuscation,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bhistory\s+-c\b|\bunset\s+HISTFILE\b|\bHISTSIZE=0\b|>\s*~?/?\S*\.(bash|zsh)_history|\brm\b[^\n]*\.(bash|zsh)_history",
        ],
        message: "erases the shell history so nobody can see what ran: delete it",
    },
    // Network abuse.
    Rule {
        id: "network.reverse-shell",
        category: NetworkAbuse,
        risk: Risk::Critical,
        code_risk: None,
        context: Always,
        patterns: &[
            r"(>&|<>|0<&|\d>&\d?)\s*/dev/(tcp|udp)/|/dev/(tcp|udp)/\S+\s*(0>&1|0<&\d|<&\d|>&\d)|\bexec\s+\d+<>\s*/dev/(tcp|udp)/",
            r"(?i)\b(nc|ncat|netcat)\b[^\n|]*\s-[a-z]*[ec]\s",
            r"(?i)\b(nc|ncat|netcat)\b[^\n]*\|\s*(/bin/)?(ba)?sh\b|\b(ba)?sh\s+-i\b[^\n]*\|\s*(nc|ncat|netcat)\b",
            r"(?i)\bmkfifo\b[^\n]*\b(nc|ncat|netcat|openssl\s+s_client)\b",
            r"(?i)\bsocat\b[^\n]*\b(exec|system):",
            r"(?i)\bsocket\.socket\b[^\n]*(\.connect|subprocess|pty\.spawn|dup2)|\bpty\.spawn\s*\(\s*['\x22]/bin/|\bos\.dup2\s*\(",
            r"(?i)\bSystem\.Net\.Sockets\.TCPClient\b|\bfsockopen\s*\(|\bruby\s+-rsocket\b|\bperl\s+-e\b[^\n]*\bsocket\b",
        ],
        message: "opens a shell on this machine for a remote host (a reverse shell): delete it; it hands the machine to whoever listens",
    },
    Rule {
        id: "network.tunnel",
        category: NetworkAbuse,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bngrok\s+(tcp|tls)\b|\bcloudflared\s+(access\s+)?tcp\b|\bssh\b[^\n]*\s-R\s*\S*\d|serveo\.net|localhost\.run|\bbore\s+local\b|\bchisel\s+(client|server)\b|\btailscale\s+funnel\b|pinggy\.io|\bfrpc\b",
        ],
        message: "opens this machine to the internet through a tunnel: delete it, or expose only a throw-away dev server and close the tunnel when done",
    },
    Rule {
        id: "network.web-tunnel",
        category: NetworkAbuse,
        risk: Risk::Medium,
        code_risk: None,
        context: Command,
        patterns: &[r"(?i)\bngrok\s+http\b|\bcloudflared\s+tunnel\b|\blt\s+--port\b|\blocaltunnel\b"],
        message: "publishes a local web server on the internet: make sure only a dev server is behind it, and close the tunnel when done",
    },
    Rule {
        id: "network.open-listener",
        category: NetworkAbuse,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\bpython[0-9.]*\s+-m\s+(http\.server|SimpleHTTPServer)\b[^\n]*(-d\s+|--directory\s+)(/|~|\$HOME)(\s|$)",
            r"(?i)\bcd\s+(/|~|\$HOME)\s*(&&|;)\s*python[0-9.]*\s+-m\s+(http\.server|SimpleHTTPServer)",
            r#"(?i)--(NotebookApp|ServerApp)\.token\s*=\s*(''|""|\s)"#,
        ],
        message: "serves the home or root folder (or a notebook without a token) to the network: serve only the project's folder on 127.0.0.1",
    },
    Rule {
        id: "network.scan",
        category: NetworkAbuse,
        risk: Risk::Medium,
        code_risk: None,
        context: Command,
        patterns: &[r"(?i)\b(nmap|masscan|zmap)\s"],
        message: "scans a network: make sure it is a network the person owns and asked to scan",
    },
    // Exfiltration that a pattern shows on its own.
    Rule {
        id: "exfiltration.dns",
        category: Exfiltration,
        risk: Risk::Critical,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)(\$\([^)]*\)|`[^`]*`)\.[\w-]+\.[a-z]{2,}",
            r"(?i)(^|[;&|(`]\s*)(dig|nslookup|host|drill|ping)\s+[^\n]*\$\{?\w+\}?\.[\w-]+\.[a-z]{2,}",
        ],
        message: "puts data into a DNS look-up, which carries it to whoever runs that domain: delete it",
    },
    Rule {
        id: "exfiltration.collector-host",
        category: Exfiltration,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(?i)\b(webhook\.site|requestbin\.\w+|pipedream\.net|pastebin\.com|paste\.ee|hastebin\.com|transfer\.sh|0x0\.st|ngrok\.io|ngrok-free\.app|interact\.sh|oast\.(fun|live|site|me|pro|online)|burpcollaborator\.net|file\.io|termbin\.com|ptpb\.pw)\b|\bdiscord(app)?\.com/api/webhooks/",
        ],
        message: "sends data to a public drop box or request catcher, where anyone can collect it: delete it, or send to a service the person owns",
    },
    // Path escapes.
    Rule {
        id: "path.escape",
        category: PathEscape,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[
            r"(\.\./)+(etc|root|home|usr|var)\b|(\.\./)+\.[A-Za-z]\w*",
            r"(?i)\btar\b[^\n]*\s-\w*P\w*\b|\btar\b[^\n]*--absolute-names",
            r"\.\./\*",
        ],
        message: "reaches far outside the project through `../` paths: use a path inside the project or the skill's folder",
    },
    Rule {
        id: "path.hosts-file",
        category: PathEscape,
        risk: Risk::High,
        code_risk: None,
        context: Command,
        patterns: &[r"(?i)(>>?|\btee\b[^\n|]*|\b(cp|mv|install)\b[^\n]*)\s/etc/hosts\b"],
        message: "rewrites /etc/hosts, which redirects names to other addresses for every program: delete it",
    },
];

/// Room for the rule set's lazy DFA.
const DFA_CACHE_BYTES: usize = 64 << 20;

static COMPILED: LazyLock<(RegexSet, Vec<(usize, Regex)>)> = LazyLock::new(|| {
    let patterns: Vec<(usize, &str)> = RULES
        .iter()
        .enumerate()
        .flat_map(|(index, rule)| rule.patterns.iter().map(move |p| (index, *p)))
        .collect();
    // The whole table in one set is matched once per line; a lazy DFA cache too small for ~100
    // patterns thrashes and falls back to a slower engine (a 1 KiB skill took 3 ms, not 0.1).
    let set = RegexSetBuilder::new(patterns.iter().map(|(_, p)| ascii_word_boundaries(p)))
        .dfa_size_limit(DFA_CACHE_BYTES)
        .build()
        .expect("rule patterns compile");
    let regexes = patterns
        .iter()
        .map(|(index, p)| (*index, regex(p).expect("rule pattern compiles")))
        .collect();
    (set, regexes)
});

/// Words that mark a line as discussing attacks rather than making one.
static DISCUSSION: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\b(injections?|attacks?|attackers?|adversarial|malicious|untrusted|suspicious|",
        r"phrases?\s+(like|such\s+as)|such\s+as|e\.g\.|for\s+example|treat\s+(it|them|this|such)|",
        r"look\s+for|detect|flag(ged|s)?|report\s+(it|them)|quoted|jailbreaks?)\b|\blike\s*[\x22“'«]"
    ))
    .expect("compiles")
});

pub(super) fn check(document: &Document) -> Vec<RawFinding> {
    let mut findings = Vec::new();
    for (index, line) in document.lines.iter().enumerate() {
        pattern_rules(line, |_, _| true, &mut findings);
        if let Some(joined) = joined_with_next(line, document.lines.get(index + 1)) {
            // Words to the agent run across a line break as often as not; only what crosses it
            // is new here.
            let boundary = line.text.len();
            pattern_rules(
                &joined,
                |rule, span| {
                    rule.context == Instruction && span.start < boundary && span.end > boundary + 1
                },
                &mut findings,
            );
        }
        remove_recursively(line, &mut findings);
        force_push(line, &mut findings);
        unpinned_install(line, &mut findings);
        credentials(line, &mut findings);
        persistence(document, line, &mut findings);
        hidden_instructions(line, &mut findings);
        encoded_blob(line, &mut findings);
    }
    exfiltration(document, &mut findings);
    download_then_run(document, &mut findings);
    findings
}

/// The table's rules on one line, where `accept` takes the rule and the match.
fn pattern_rules(
    line: &Line,
    accept: impl Fn(&Rule, &Range<usize>) -> bool,
    findings: &mut Vec<RawFinding>,
) {
    let (set, regexes) = &*COMPILED;
    for pattern in set.matches(&line.text).iter() {
        let (rule_index, regex) = &regexes[pattern];
        let rule = &RULES[*rule_index];
        let span = regex.find(&line.text).map_or(0..0, |m| m.range());
        if !accept(rule, &span) {
            continue;
        }
        let mut risk = match rule.code_risk {
            Some(risk) if line.code => risk,
            _ => rule.risk,
        };
        let mut message = rule.message.to_string();
        match mitigation(rule.id, &line.text) {
            Some(Mitigation::NotAFinding) => continue,
            Some(Mitigation::Lower(lower, why)) => {
                risk = risk.min(lower);
                message = why.to_string();
            }
            None => {}
        }
        emit(
            findings,
            line,
            Hit {
                rule: rule.id,
                category: rule.category,
                risk,
                context: rule.context,
                span,
                message,
            },
        );
    }
}

/// A prose line and the next one of its paragraph, as one line numbered like the first.
fn joined_with_next(line: &Line, next: Option<&Line>) -> Option<Line> {
    let next = next.filter(|next| {
        !line.code
            && !next.code
            && next.hidden == line.hidden
            && next.number == line.number + 1
            && !next.text.trim_start().starts_with(['#', '-', '*', '|'])
    })?;
    Some(Line {
        number: line.number,
        original: format!("{} {}", line.original, next.original),
        text: format!("{} {}", line.text, next.text),
        code: false,
        hidden: line.hidden,
        counterexample: line.counterexample,
        block: None,
    })
}

/// One match before its context is applied.
struct Hit {
    rule: &'static str,
    category: Category,
    risk: Risk,
    context: Context,
    span: Range<usize>,
    message: String,
}

/// Applies the line's context to a match and records it.
fn emit(findings: &mut Vec<RawFinding>, line: &Line, hit: Hit) {
    let Hit {
        rule,
        category,
        mut risk,
        context,
        span,
        mut message,
    } = hit;
    let elsewhere = format!("{} {}", &line.text[..span.start], &line.text[span.end..]);
    if line.hidden {
        if risk >= Risk::Medium {
            risk = risk.max(Risk::High);
            message += "; it sits in an HTML comment, which a person reading the skill never sees";
        }
    } else {
        let discussed = DISCUSSION.is_match(&elsewhere);
        let (cap, why) = match context {
            Command if line.counterexample || is_negated_context(&elsewhere) => {
                (Risk::Low, " (shown here as something not to do, so it stays low)")
            }
            Command | Instruction if discussed && !line.code => (
                Risk::Low,
                " (the text discusses it rather than asking for it, so it stays low)",
            ),
            Instruction if is_quoted(&line.text, &span) => (
                Risk::Low,
                " (it stands in quotation marks, quoted rather than said, so it stays low)",
            ),
            Instruction if line.counterexample => (
                Risk::Low,
                " (shown here as an example to recognise, so it stays low)",
            ),
            Instruction if line.code => (
                Risk::Medium,
                " (in a code block it reads as data, not as words to the agent; check why it is there)",
            ),
            _ => (Risk::Critical, ""),
        };
        if risk > cap {
            risk = cap;
            message += why;
        }
    }
    findings.push(RawFinding {
        rule,
        category,
        risk,
        line: line.number,
        excerpt: excerpt_of(line, span),
        message,
    });
}

/// Whether `span` of `text` sits between quotation marks.
fn is_quoted(text: &str, span: &Range<usize>) -> bool {
    let (before, after) = (&text[..span.start], &text[span.end..]);
    let straight = before.matches('"').count() % 2 == 1 && after.contains('"');
    let curly = before.matches('“').count() > before.matches('”').count() && after.contains('”');
    straight || curly
}

/// The line as written; a long line is cut around the match (positions are those of the
/// normalized text, which equals the written one whenever no character was mapped).
fn excerpt_of(line: &Line, span: Range<usize>) -> String {
    const CONTEXT_BYTES: usize = 40;
    if line.original.len() <= 120 || line.original != line.text {
        return excerpt(&line.original);
    }
    let mut start = span.start.saturating_sub(CONTEXT_BYTES);
    while !line.text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (span.end + CONTEXT_BYTES).min(line.text.len());
    while !line.text.is_char_boundary(end) {
        end += 1;
    }
    let prefix = if start > 0 { "…" } else { "" };
    excerpt(&format!("{prefix}{}", &line.text[start..end]))
}

fn hit(
    rule: &'static str,
    category: Category,
    risk: Risk,
    context: Context,
    span: Range<usize>,
    message: impl Into<String>,
) -> Hit {
    Hit {
        rule,
        category,
        risk,
        context,
        span,
        message: message.into(),
    }
}

static RM: LazyLock<Regex> = LazyLock::new(|| regex(r"\brm\s+([^\n;&|)]*)").expect("compiles"));

/// What `rm -r` must never be pointed at.
const PRECIOUS_TARGETS: &[&str] = &[
    "/",
    "/*",
    "~",
    "~/",
    "~/*",
    "$HOME",
    "$HOME/",
    "$HOME/*",
    "${HOME}",
    "${HOME}/",
    "${HOME}/*",
    "/home",
    "/home/*",
    "/etc",
    "/usr",
    "/var",
    "/boot",
    "/bin",
    "/lib",
    "/opt",
    "/root",
    "/srv",
    "/System",
    "/Users",
    "..",
    "../",
    "../*",
    "~/.ssh",
    "~/.config",
    "~/Documents",
    ".git",
];

/// `rm -r` of the root, the home folder, a system folder or the repository itself.
fn remove_recursively(line: &Line, findings: &mut Vec<RawFinding>) {
    for capture in RM.captures_iter(&line.text) {
        let arguments = capture.get(1).expect("group 1");
        let words: Vec<String> = arguments
            .as_str()
            .split_whitespace()
            .map(|w| w.replace(['"', '\'', '`'], ""))
            .collect();
        let recursive = words.iter().any(|w| {
            *w == "--recursive"
                || (w.starts_with('-') && !w.starts_with("--") && w.contains(['r', 'R']))
        });
        let no_preserve = words.iter().any(|w| w == "--no-preserve-root");
        let target = words
            .iter()
            .find(|w| PRECIOUS_TARGETS.contains(&w.as_str()) || w.starts_with("/*"));
        if !(recursive && (target.is_some() || no_preserve)) {
            continue;
        }
        let what = target.map_or("/", String::as_str);
        emit(
            findings,
            line,
            hit(
                "destructive.remove-everything",
                Destructive,
                Risk::Critical,
                Command,
                capture.get(0).expect("match").range(),
                format!("deletes `{what}` and everything under it: delete the command, or name the project folder meant (for example ./build)"),
            ),
        );
    }
}

static GIT_PUSH: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\bgit\s+push\b([^\n;&|]*)").expect("compiles"));

/// A forced push rewrites shared history; on the main branch (or every branch) it loses work.
fn force_push(line: &Line, findings: &mut Vec<RawFinding>) {
    for capture in GIT_PUSH.captures_iter(&line.text) {
        let words: Vec<&str> = capture[1].split_whitespace().collect();
        let forced = words.iter().any(|w| *w == "--force" || *w == "-f")
            || words.iter().any(|w| w.starts_with('+') && w.len() > 1);
        let deletes = words.iter().any(|w| *w == "--delete" || *w == "-d")
            || words.iter().any(|w| w.starts_with(':') && w.len() > 1);
        let shared = words.iter().any(|w| {
            let branch = w.trim_start_matches(['+', ':']);
            let branch = branch.rsplit(':').next().unwrap_or(branch);
            matches!(
                branch,
                "main" | "master" | "trunk" | "develop" | "production" | "prod" | "release"
            ) || matches!(*w, "--all" | "--mirror" | "--tags")
        });
        let (risk, message) = match (forced || deletes, shared) {
            (false, _) => continue,
            (true, true) => (Risk::High, "force-pushes or deletes a shared branch (main, every branch, the tags), which destroys other people's work: push to a branch of your own, and use --force-with-lease if you must rewrite it"),
            (true, false) => (Risk::Medium, "force-pushes or deletes a branch: make sure it is a branch only this task owns, and prefer --force-with-lease"),
        };
        emit(
            findings,
            line,
            hit(
                "destructive.git-history",
                Destructive,
                risk,
                Command,
                capture.get(0).expect("match").range(),
                message,
            ),
        );
    }
}

static UNPINNED: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"(?i)\bpip[0-9.]*\s+install\b[^\n]*\bgit\+\S+", "@"),
        (
            r"(?i)\bpip[0-9.]*\s+install\b[^\n]*\shttps?://\S+",
            "#sha256=",
        ),
        (
            r"(?i)\bnpm\s+(i|install|add)\b[^\n]*\s(github:|git\+|https?://)\S+",
            "#",
        ),
        (r"(?i)\bcargo\s+install\b[^\n]*--git\s+\S+[^\n]*", "--rev"),
        (r"(?i)\bgo\s+install\s+\S+@latest\b", "never pinned"),
    ]
    .into_iter()
    .map(|(p, pin)| (regex(p).expect("compiles"), pin))
    .collect()
});

/// An install from a URL or a repository without a pinned revision runs whatever is there today.
fn unpinned_install(line: &Line, findings: &mut Vec<RawFinding>) {
    for (regex, pin) in UNPINNED.iter() {
        let Some(found) = regex.find(&line.text) else {
            continue;
        };
        let tail = found.as_str().rsplit('/').next().unwrap_or("");
        let pinned = match *pin {
            "@" => tail.contains('@'),
            "--rev" => ["--rev", "--tag", "--locked --tag"]
                .iter()
                .any(|p| found.as_str().contains(p)),
            "never pinned" => false,
            marker => found.as_str().contains(marker),
        };
        if pinned {
            continue;
        }
        emit(
            findings,
            line,
            hit(
                "download-execute.unpinned-install",
                DownloadExecute,
                Risk::High,
                Command,
                found.range(),
                "installs from a URL or repository without pinning a version, so it runs whatever is there on the day: pin a tag or commit (or a hash)",
            ),
        );
    }
}

/// Key and token shapes (the vendors' documented prefixes).
static KEY_SHAPES: LazyLock<Vec<(Regex, &'static str, Risk)>> = LazyLock::new(|| {
    [
        (r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", "an AWS access key", Risk::High),
        (r#"(?i)aws_secret_access_key\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}"#, "an AWS secret key", Risk::High),
        (r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{22,}", "a GitHub token", Risk::High),
        (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token", Risk::High),
        (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "a Slack token", Risk::High),
        (r"hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}", "a Slack webhook secret", Risk::High),
        (r"\bsk-ant-[A-Za-z0-9_-]{20,}", "an Anthropic API key", Risk::High),
        (r"\bsk-(proj-|svcacct-)?[A-Za-z0-9_-]{32,}", "an OpenAI API key", Risk::High),
        (r"\b(sk|rk)_live_[A-Za-z0-9]{16,}", "a Stripe live key", Risk::High),
        (r"\bAIza[0-9A-Za-z_-]{35}\b", "a Google API key", Risk::High),
        (r"\bnpm_[A-Za-z0-9]{36}\b", "an npm token", Risk::High),
        (r"\b(hf_[A-Za-z0-9]{30,})\b", "a Hugging Face token", Risk::High),
        (r"-----BEGIN ((RSA|DSA|EC|OPENSSH|PGP|ENCRYPTED) )?PRIVATE KEY( BLOCK)?-----", "a private key", Risk::Critical),
        (r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "a signed token (JWT)", Risk::Medium),
        (r#"(?i)\b[a-z][a-z0-9+]*://[^\s:/@'"]+:([^\s:/@'"$<{]{6,})@"#, "a password in a URL", Risk::Medium),
        (r#"(?i)\b(password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b\s*[:=]\s*["']?([^\s"'`,;$<{]{12,})"#, "a password or key", Risk::Medium),
    ]
    .into_iter()
    .map(|(p, what, risk)| (regex(p).expect("compiles"), what, risk))
    .collect()
});

/// Placeholders are not secrets: `your-key-here`, `xxxx`, `<token>`, AWS's documented example.
fn looks_like_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "example",
        "xxxx",
        "your",
        "placeholder",
        "redacted",
        "dummy",
        "sample",
        "changeme",
        "change_me",
        "replace",
        "token_value",
        "secret_value",
        "******",
        "...",
        "…",
        "password",
        "env.",
        "environ",
        "getenv",
        "secrets.",
    ];
    if WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    shannon_entropy(value) < 3.0
}

fn shannon_entropy(value: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in value.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let length = value.chars().count() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / length;
            -p * p.log2()
        })
        .sum()
}

fn credentials(line: &Line, findings: &mut Vec<RawFinding>) {
    for (regex, what, risk) in KEY_SHAPES.iter() {
        let Some(captures) = regex.captures(&line.text) else {
            continue;
        };
        let whole = captures.get(0).expect("match");
        let value = captures
            .iter()
            .skip(1)
            .flatten()
            .last()
            .filter(|_| *risk == Risk::Medium)
            .map_or(whole.as_str(), |m| m.as_str());
        let (risk, message) = if *risk == Risk::Critical {
            (*risk, format!("contains {what}: delete it from the skill, and replace the key, which is no longer secret"))
        } else if looks_like_placeholder(value) {
            if whole.as_str().contains("EXAMPLE") {
                (Risk::Low, format!("contains {what} that is a documented example, not a live one: fine, but use a placeholder such as <KEY>"))
            } else {
                continue;
            }
        } else {
            (*risk, format!("contains what looks like {what}: remove it, read it from the environment or a secret store instead, and revoke the key"))
        };
        emit(
            findings,
            line,
            hit(
                "credentials.in-text",
                Credentials,
                risk,
                Always,
                whole.range(),
                message,
            ),
        );
    }
}

/// A write in code: a redirect (not `2>` or `&>`), tee, copy, an in-place edit, a config set.
static WRITE: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)((^|[^0-9&>])>>?|\btee\b|\bcp\b|\bmv\b|\bln\s+-s|\bsed\s+-i|\binstall\s+-|\bdd\b|\bgit\s+config\b|",
        r"open\([^)]*['\x22][aw]\+?['\x22]|write_text|appendFile|writeFile|Add-Content|Set-Content|Out-File)"
    ))
    .expect("compiles")
});

/// A write in prose: an instruction to the agent to change a file.
static WRITE_VERB: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(append|add|write|insert|prepend|put|save|create|sets?|edit|modify|update|overwrite|replace)\b")
        .expect("compiles")
});

/// A write that adds to what a file holds rather than writing it afresh.
static APPENDS: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)>>|\btee\s+-a\b|\bsed\s+-i\b|\b(append|add|insert|prepend|echo)\b|['\x22]a\+?['\x22]|appendFile|Add-Content")
        .expect("compiles")
});

static HEREDOC: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"<<-?\s*['"]?(\w+)['"]?"#).expect("compiles"));

/// What a persistent change carries that makes it an attack rather than a convenience.
static PAYLOAD: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\b(curl|wget|nc|ncat|netcat|socat|base64|python[0-9.]*\s+-c|bash\s+-i|iwr|irm)\b|/dev/tcp/|",
        r"\balias\s+(sudo|ls|cd|git|ssh|cat|rm)=|\bPROMPT_COMMAND=|\bLD_PRELOAD="
    ))
    .expect("compiles")
});

/// Where to look for what a persistent change carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PayloadScope {
    /// The line and the here-document it starts: a shell start-up file gets only that.
    Line,
    /// The whole code block: a hook or a job is written in one place and installed in another.
    Block,
}

struct PersistenceTarget {
    rule: &'static str,
    pattern: &'static str,
    /// The pattern names the writing itself (`| crontab -`), so no separate write is needed.
    writes_itself: bool,
    /// Risk of the change on its own, when it replaces the file, and with a payload.
    risk: Risk,
    replace_risk: Risk,
    with_payload: Risk,
    payload_scope: PayloadScope,
    what: &'static str,
}

const PERSISTENCE_TARGETS: &[PersistenceTarget] = &[
    PersistenceTarget {
        rule: "persistence.authorized-keys",
        pattern: r"authorized_keys2?\b",
        writes_itself: false,
        risk: Risk::Critical,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Line,
        what: "adds a key to authorized_keys, which lets its owner log in to this machine: delete it; a person adds keys themselves",
    },
    PersistenceTarget {
        rule: "persistence.agent-config",
        pattern: r"(?i)(\.hermes/|\.zeph/|\.claude/|\.codex/|\.continue/|\.aider\.conf|/skills/[\w.-]+/SKILL\.md|\$\{?\w+\}?/SKILL\.md)",
        writes_itself: false,
        risk: Risk::High,
        replace_risk: Risk::High,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Line,
        what: "rewrites an agent's own settings or another skill, so the change outlives this task and reaches other work: delete it; a skill changes only its own folder",
    },
    PersistenceTarget {
        rule: "persistence.agent-instructions",
        pattern: r"(?i)(AGENTS\.md|CLAUDE\.md|GEMINI\.md|\.cursorrules|\.cursor/rules|\.windsurfrules|copilot-instructions\.md|\.clinerules)",
        writes_itself: false,
        risk: Risk::High,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Line,
        what: "adds to another agent's instruction file, so its words reach every later session: delete it, unless writing that file is exactly the task the person asked for",
    },
    PersistenceTarget {
        rule: "persistence.shell-startup",
        pattern: r"(?i)\.(bashrc|zshrc|profile|bash_profile|zprofile|zshenv|bash_login|config/fish/config\.fish)\b|/etc/profile",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Line,
        what: "changes the shell's start-up file, so it runs in every future shell",
    },
    PersistenceTarget {
        rule: "persistence.scheduled",
        pattern: r"(?i)\|\s*crontab(\s+-)?\s*($|[;&)])|\bcrontab\s+[\w./-]+\.(txt|cron|tab)\b|@reboot\b|\bschtasks\s+/create\b",
        writes_itself: true,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Block,
        what: "schedules a command to run again later, on its own",
    },
    PersistenceTarget {
        rule: "persistence.scheduled",
        pattern: r"(?i)/etc/cron\.\w+/|/etc/crontab\b|/var/spool/cron|\\CurrentVersion\\Run\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Block,
        what: "schedules a command to run again later, on its own",
    },
    PersistenceTarget {
        rule: "persistence.service",
        pattern: r"(?i)\.config/systemd/user/|/etc/systemd/system/|\bsystemctl\s+(--user\s+)?enable\b|Library/Launch(Agents|Daemons)|\blaunchctl\s+(load|bootstrap)\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::High,
        payload_scope: PayloadScope::Block,
        what: "installs a service that starts by itself",
    },
    PersistenceTarget {
        rule: "persistence.git-hooks",
        pattern: r"(?i)\.git/hooks/[\w-]+|\bcore\.hooksPath\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::High,
        payload_scope: PayloadScope::Block,
        what: "installs a git hook, which runs on every commit or push",
    },
    PersistenceTarget {
        rule: "persistence.ssh-config",
        pattern: r"(?i)\.ssh/config\b|\bProxyCommand\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::High,
        payload_scope: PayloadScope::Line,
        what: "changes the SSH client's settings, which every later connection follows",
    },
];

static PERSISTENCE_REGEXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    PERSISTENCE_TARGETS
        .iter()
        .map(|t| regex(t.pattern).expect("compiles"))
        .collect()
});

/// Writes that outlive the task. A cron job or a shell alias may be what the person asked for
/// (`medium`); one that fetches or opens a connection is how an attacker stays (`critical`).
fn persistence(document: &Document, line: &Line, findings: &mut Vec<RawFinding>) {
    let write = if line.code {
        WRITE.find(&line.text)
    } else {
        WRITE_VERB.find(&line.text)
    };
    for (target, regex) in PERSISTENCE_TARGETS.iter().zip(PERSISTENCE_REGEXES.iter()) {
        let Some(found) = regex.find(&line.text) else {
            continue;
        };
        let written =
            target.writes_itself || write.is_some_and(|w| !line.code || w.start() < found.start());
        if !written {
            continue;
        }
        let carries_payload = PAYLOAD.is_match(&line.text)
            || match target.payload_scope {
                PayloadScope::Line => {
                    heredoc_body(document, line).any(|l| PAYLOAD.is_match(&l.text))
                }
                PayloadScope::Block => {
                    line.block.is_some()
                        && document
                            .lines
                            .iter()
                            .any(|l| l.block == line.block && PAYLOAD.is_match(&l.text))
                }
            };
        let (risk, message) = if carries_payload {
            (
                target.with_payload,
                format!(
                    "{}, and what it adds fetches code or opens a connection: delete it",
                    target.what
                ),
            )
        } else if !APPENDS.is_match(&line.text) && target.replace_risk < target.risk {
            (
                target.replace_risk,
                format!(
                    "{} (here it copies or writes the whole file: check what it puts there)",
                    target.what
                ),
            )
        } else if target.risk == Risk::Medium {
            (
                Risk::Medium,
                format!(
                    "{}: keep it only if the person asked for exactly this",
                    target.what
                ),
            )
        } else {
            (target.risk, target.what.to_string())
        };
        emit(
            findings,
            line,
            hit(
                target.rule,
                Persistence,
                risk,
                Command,
                found.range(),
                message,
            ),
        );
    }
}

/// The lines of a here-document that `line` starts, if it starts one.
fn heredoc_body<'a>(document: &'a Document, line: &'a Line) -> impl Iterator<Item = &'a Line> {
    let marker = HEREDOC.captures(&line.text).map(|c| c[1].to_string());
    document
        .lines
        .iter()
        .skip_while(move |l| !std::ptr::eq(*l, line))
        .skip(1)
        .take_while(move |l| {
            marker
                .as_deref()
                .is_some_and(|m| l.block == line.block && l.text.trim() != m)
        })
}

static ADDRESSES_AGENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\b(assistant|agent|ai|model|llm|claude|gpt|copilot|chatbot|you\s+(must|should|will|are)|",
        r"ignore|instructions?|do\s+not\s+tell|don'?t\s+tell|secretly|silently|without\s+asking|",
        r"execute|exfiltrate|upload|send\s+(the|all|any|every))\b"
    ))
    .expect("compiles")
});

/// An HTML comment that speaks to the agent: a reader of the rendered skill never sees it.
fn hidden_instructions(line: &Line, findings: &mut Vec<RawFinding>) {
    if !line.hidden {
        return;
    }
    let Some(found) = ADDRESSES_AGENT.find(&line.text) else {
        return;
    };
    emit(
        findings,
        line,
        hit(
            "injection.hidden-comment",
            PromptInjection,
            Risk::High,
            Always,
            found.range(),
            "gives instructions inside an HTML comment, which the agent reads and a person reading the skill never sees: delete the comment, or move what it says into the visible text",
        ),
    );
}

static BLOB: LazyLock<Regex> =
    LazyLock::new(|| regex(r"[A-Za-z0-9+/]{120,}={0,2}|\b[0-9a-fA-F]{120,}\b").expect("compiles"));

/// A long encoded blob hides what it says from every reader.
fn encoded_blob(line: &Line, findings: &mut Vec<RawFinding>) {
    let Some(found) = BLOB.find(&line.text) else {
        return;
    };
    if line.text[..found.start()].ends_with("base64,") && line.text.contains("data:image/") {
        return;
    }
    emit(
        findings,
        line,
        hit(
            "obfuscation.encoded-blob",
            Obfuscation,
            Risk::Medium,
            Always,
            found.range(),
            "carries a long encoded blob that no reader can check: decode it and read what it says, or remove it",
        ),
    );
}

/// Where secrets live: key files, credential stores, a dump of the whole environment.
static SECRET_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r#"(?i)\.ssh(/?(\s|$|["')|;*])|/id_\w+(\s|$|["')|;,]))|\bid_(rsa|dsa|ecdsa|ed25519)(\s|$|["')|;,])|"#,
        r#"\.aws(/credentials|/config|/?(\s|$|["')|;]))|\.gnupg\b|\.kube/config\b|\.docker/config\.json|"#,
        r#"\.netrc\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|\.pgpass\b|\.(bash|zsh)_history\b|"#,
        r#"/etc/(shadow|passwd|sudoers)\b|\bwallet\.dat\b|Login\s+Data|\bCookies\b|logins\.json|key4\.db|cookies\.sqlite|\bkeychain\b|find-generic-password|"#,
        r#"(^|[\s'"=(/])\.env(\s|$|["')|;>,])|gcloud/(credentials|application_default)|"#,
        r#"(^\s*|[|;&(`{]\s*|\$\(\s*)(printenv|env|set)\s*($|[|;)>`}])|\bdict\s*\(\s*os\.environ\s*\)|os\.environ\.(copy|items)\s*\(|"#,
        r#"str\s*\(\s*os\.environ\s*\)|JSON\.stringify\s*\(\s*process\.env\s*\)|/proc/\S*/environ|\bgh\s+auth\s+token\b|"#,
        r#"\baws\s+configure\s+(export-credentials|get)\b"#
    ))
    .expect("compiles")
});

/// Sends data (not just a request) to another machine.
static DATA_SINK: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\bcurl\b[^\n]*(\s(-d|--data[\w-]*|-F|--form|-T|--upload-file)(\s|=)|@-)|",
        r"\bwget\b[^\n]*--(post|body)-(data|file)|\b(nc|ncat|netcat|socat|telnet)\s+[^\s|;]+\s+\d+|/dev/(tcp|udp)/|",
        r"\bscp\b[^\n]*\S+:|\brsync\b[^\n]*\s\S*:\S*|\brequests\.(post|put|patch)\s*\(|\bhttpx\.(post|put)\s*\(|",
        r"\burllib\.request\.(urlopen|Request)\s*\(|\bfetch\s*\([^)]*(method\s*:\s*['\x22](POST|PUT)|body\s*:)|",
        r"\baxios\.(post|put)\s*\(|Invoke-(WebRequest|RestMethod)[^\n]*-(Body|InFile)|\b(mail|sendmail|mutt)\b[^\n]*@|",
        r"\bgh\s+gist\s+create\b|\baws\s+s3\s+cp\b[^\n]*s3://|\bgsutil\s+cp\b[^\n]*gs://|\|\s*(curl|wget|nc|ncat|netcat)\b"
    ))
    .expect("compiles")
});

/// An auth header is how a token is *meant* to be sent; it says nothing about exfiltration.
static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    regex(r#"(?i)(-H|--header)\s+["'][^"']*["']|authorization\s*[:=]\s*\S+"#).expect("compiles")
});

static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s*(export\s+|local\s+|const\s+|let\s+|var\s+)?([A-Za-z_]\w*)\s*=").expect("compiles")
});
static OUTPUT_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:>>?|\s-o|\btar\s+-?c\w*f|\bzip\s+(?:-\w+\s+)*)\s*(\S+)").expect("compiles")
});

/// Secrets read and sent: on one line, or read on one line (into a variable, a file or a
/// folder) and sent later — from a line that names it, or a code block that does.
fn exfiltration(document: &Document, findings: &mut Vec<RawFinding>) {
    const MESSAGE: &str = "reads secrets (keys, credentials, the environment) and sends them to another machine: delete the upload; nothing in a skill should send keys anywhere";
    let mut read_into: Vec<String> = Vec::new();
    let mut blocks_reading_secrets: Vec<usize> = Vec::new();
    for line in &document.lines {
        let cleaned = AUTH_HEADER.replace_all(&line.text, " ");
        let source = SECRET_SOURCE.find(&cleaned);
        let sink = DATA_SINK.find(&cleaned);
        if let (Some(source), Some(sink)) = (&source, &sink) {
            let span = source.start().min(sink.start())..source.end().max(sink.end());
            let span = span.start.min(line.text.len())..span.end.min(line.text.len());
            emit(
                findings,
                line,
                hit(
                    "exfiltration.secret-upload",
                    Exfiltration,
                    Risk::Critical,
                    Command,
                    span,
                    MESSAGE,
                ),
            );
            continue;
        }
        if source.is_some() {
            let named_before = read_into.len();
            read_into.extend(ASSIGNED.captures(&cleaned).map(|c| c[2].to_string()));
            read_into.extend(OUTPUT_FILE.captures(&cleaned).map(|c| c[1].to_string()));
            read_into.extend(copy_destination(&cleaned));
            // A secret kept in a name is followed by that name; one that is not (a grouped
            // `{ env; cat ~/.aws/credentials; } | gzip > f`) may leave with any later upload.
            if read_into.len() == named_before {
                blocks_reading_secrets.extend(line.block);
            }
            continue;
        }
        let Some(sink) = sink else {
            continue;
        };
        let carries = read_into.iter().find(|name| {
            carries_name(&cleaned, name)
                || (line.block.is_some()
                    && document.lines.iter().any(|l| {
                        let text = AUTH_HEADER.replace_all(&l.text, " ");
                        l.block == line.block
                            && !SECRET_SOURCE.is_match(&text)
                            && carries_name(&text, name)
                    }))
        });
        let same_block = line
            .block
            .is_some_and(|block| blocks_reading_secrets.contains(&block));
        if carries.is_none() && same_block {
            let span = sink.start().min(line.text.len())..sink.end().min(line.text.len());
            emit(
                findings,
                line,
                hit(
                    "exfiltration.secret-upload",
                    Exfiltration,
                    Risk::High,
                    Command,
                    span,
                    "reads secrets (keys, credentials, the environment) and sends data to another machine in the same steps: make sure the upload carries none of them, or delete it",
                ),
            );
        }
        if let Some(name) = carries {
            let span = sink.start().min(line.text.len())..sink.end().min(line.text.len());
            emit(
                findings,
                line,
                hit(
                    "exfiltration.secret-upload",
                    Exfiltration,
                    Risk::Critical,
                    Command,
                    span,
                    format!("{MESSAGE} (`{name}` holds what was read above)"),
                ),
            );
        }
    }
}

/// Where `cp`, `rsync` or `mv` puts what it copies: its last argument, redirects aside.
fn copy_destination(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let command = words
        .iter()
        .position(|w| matches!(*w, "cp" | "rsync" | "mv"))?;
    words[command + 1..]
        .iter()
        .rfind(|w| !w.starts_with('-') && !w.contains('>'))
        .map(|w| w.trim_end_matches('/').to_string())
        .filter(|w| w.len() > 1)
}

/// Whether `text` uses the variable or file `name` (a variable as a whole word).
fn carries_name(text: &str, name: &str) -> bool {
    let looks_like_variable = name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !looks_like_variable {
        return text.contains(name);
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

static DOWNLOAD_TO_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(curl|wget)\b[^\n|]*?(\s(-o|-O|--output|--output-document)\s*=?\s*(\S+)|\s(https?://\S+))")
        .expect("compiles")
});
static CHECKSUM: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(sha256sum|sha512sum|shasum\s+-a\s*(256|512))\b[^\n]*(-c|--check|==|=)|\bgpg\s+--verify\b|\bcosign\s+verify|\bminisign\s+-V|\bsha256sum\b[^\n]*\|\s*grep|\bGet-FileHash\b")
        .expect("compiles")
});
static RUNS_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(^|[;&|]\s*|\bsudo\s+)(\./|(ba|z)?sh\s+|python[0-9.]*\s+|perl\s+|node\s+|chmod\s+\+?[0-7]*x?\s*\+?x?\s*|source\s+|\.\s+)(\S+)")
        .expect("compiles")
});

/// A file downloaded and then run in the same block, with no checksum check in between.
fn download_then_run(document: &Document, findings: &mut Vec<RawFinding>) {
    let mut downloaded: Vec<(Option<usize>, String)> = Vec::new();
    for line in &document.lines {
        if line.block.is_none() {
            continue;
        }
        if let Some(captures) = DOWNLOAD_TO_FILE.captures(&line.text) {
            let named = captures.get(4).map(|m| m.as_str().to_string());
            let from_url = captures
                .get(5)
                .and_then(|m| m.as_str().rsplit('/').next().map(str::to_string));
            if let Some(file) = named.or(from_url).filter(|f| !f.is_empty() && f != "-") {
                let file = file.trim_matches(|c| c == '"' || c == '\'').to_string();
                downloaded.push((line.block, file));
            }
        }
        for captures in RUNS_FILE.captures_iter(&line.text) {
            let ran = captures[captures.len() - 1].trim_matches(|c| c == '"' || c == '\'');
            let ran_base = ran.trim_start_matches("./");
            let Some((_, file)) = downloaded.iter().find(|(block, file)| {
                *block == line.block
                    && !ran_base.is_empty()
                    && file.trim_start_matches("./").ends_with(ran_base)
            }) else {
                continue;
            };
            let verified = document
                .lines
                .iter()
                .any(|l| l.block == line.block && CHECKSUM.is_match(&l.text));
            let (risk, message) = if verified {
                (Risk::Low, format!("runs `{file}`, downloaded above, after checking its checksum: fine if the checksum comes from the publisher"))
            } else {
                (Risk::High, format!("downloads `{file}` and runs it without checking it: compare its sha256 with the one the publisher gives before running it"))
            };
            let span = captures.get(0).expect("match").range();
            emit(
                findings,
                line,
                hit(
                    "download-execute.run-downloaded",
                    DownloadExecute,
                    risk,
                    Command,
                    span,
                    message,
                ),
            );
            break;
        }
    }
}
