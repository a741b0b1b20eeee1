//! A pseudo-terminal agent owns, for a CLI that prints nothing when its stdout is not a
//! terminal (DESIGN §22: Antigravity): the CLI's stdout is the terminal's far end, and what
//! it prints there comes back to agent as text with the terminal's control sequences
//! removed ([`Plain`]) — cursor moves, colours, titles — and the line discipline's `\r\n`
//! back to `\n`. Only stdout is given the terminal: stdin and stderr stay what they were,
//! so a CLI's stderr words are still told apart from its answer.

use std::fs::File;
use std::io::{self, IsTerminal as _};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::libc;
use nix::pty::{Winsize, openpty};

/// The size a terminal of agent's own has when agent has none to copy: wide, so a CLI
/// that wraps its lines to the terminal's width does not break a long answer.
const DEFAULT_SIZE: Winsize = Winsize {
    ws_row: 50,
    ws_col: 200,
    ws_xpixel: 0,
    ws_ypixel: 0,
};

/// One pseudo-terminal: `far` becomes the child's stdout (and is dropped by agent once the
/// child has it, so that the terminal ends with the child); `near` is read by agent.
pub struct Pty {
    pub near: File,
    pub far: OwnedFd,
}

/// Opens a pseudo-terminal the size of agent's own terminal (stdin's or stderr's, when
/// either is one), else [`DEFAULT_SIZE`].
pub fn open() -> io::Result<Pty> {
    let size = own_size().unwrap_or(DEFAULT_SIZE);
    let pair = openpty(&size, None).map_err(io::Error::from)?;
    // openpty(3) leaves both ends inheritable: another child started meanwhile (checks run
    // at once) would hold the far end open, and the terminal would not end with this one.
    for fd in [&pair.master, &pair.slave] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map_err(io::Error::from)?;
    }
    Ok(Pty {
        near: File::from(pair.master),
        far: pair.slave,
    })
}

/// The size of agent's own terminal: stdin's, else stderr's (stdout is not one when a
/// pseudo-terminal is wanted).
pub fn own_size() -> Option<Winsize> {
    let stdin = io::stdin();
    let stderr = io::stderr();
    if stdin.is_terminal() {
        size_of(stdin.as_fd())
    } else if stderr.is_terminal() {
        size_of(stderr.as_fd())
    } else {
        None
    }
}

/// Gives `pty` (its near end) the size `size`: the CLI on it hears SIGWINCH from the
/// kernel, as it would on a terminal a person resized.
pub fn resize(near: &File, size: &Winsize) {
    // SAFETY: TIOCSWINSZ reads one `winsize` through the pointer, which is valid for reads.
    let _ = unsafe { libc::ioctl(near.as_raw_fd(), libc::TIOCSWINSZ, std::ptr::from_ref(size)) };
}

/// The size of the terminal `fd` is, if it is one.
pub fn size_of(fd: BorrowedFd<'_>) -> Option<Winsize> {
    let mut size = DEFAULT_SIZE;
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which is valid for writes.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            libc::TIOCGWINSZ,
            std::ptr::from_mut(&mut size),
        )
    };
    (rc == 0 && size.ws_col > 0 && size.ws_row > 0).then_some(size)
}

/// Same size: the same rows and columns.
pub fn same_size(a: &Winsize, b: &Winsize) -> bool {
    a.ws_row == b.ws_row && a.ws_col == b.ws_col
}

/// Where [`Plain`] is in what the terminal's far end wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Text,
    /// After a `\r`: a `\n` next makes one newline; anything else, the `\r` only moved the
    /// cursor back (a spinner redrawing its line) and is dropped.
    Return,
    /// After `0xC2`, the lead byte of U+0080–U+00BF: with `0x80`–`0x9F` next it is a C1
    /// control written in UTF-8, which terminals that read UTF-8 obey as the raw byte.
    LeadC2,
    /// After ESC.
    Escape,
    /// After ESC and an intermediate byte (`ESC ( B`).
    EscapeIntermediate,
    /// In a CSI sequence (`ESC [ … final`, or C1 `CSI … final`).
    Csi,
    /// In a string (OSC `ESC ]`, DCS `ESC P`, SOS, PM, APC, or their C1 forms) until BEL,
    /// `ESC \\` or C1 `ST`.
    Str,
    /// An ESC inside a string: `\\` ends it.
    TextEscape,
}

/// Terminal output made plain text, chunk by chunk (a sequence may be split between two
/// reads): CSI, OSC and other ESC sequences, their 8-bit C1 forms (`0x9B` CSI, `0x9D` OSC:
/// a clipboard write or a screen clear on terminals that read them, raw or written in
/// UTF-8), and the other controls but newline and tab removed, `\r\n` made `\n`. UTF-8 text
/// passes whole: a continuation byte of a character is never taken for a C1 control.
#[derive(Debug)]
pub struct Plain {
    at: At,
    /// How many continuation bytes the UTF-8 character being passed still has.
    continuing: u8,
}

impl Default for Plain {
    fn default() -> Self {
        Plain {
            at: At::Text,
            continuing: 0,
        }
    }
}

impl Plain {
    /// The plain text in `bytes`, given what came before.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        for &byte in bytes {
            self.step(byte, &mut out);
        }
        out
    }

    fn step(&mut self, byte: u8, out: &mut Vec<u8>) {
        const ESC: u8 = 0x1b;
        const BEL: u8 = 0x07;
        const ST: u8 = 0x9c;
        self.at = match self.at {
            At::Return if byte == b'\n' => {
                out.push(b'\n');
                At::Text
            }
            At::Return => {
                self.at = At::Text;
                return self.step(byte, out);
            }
            At::Text => self.text(byte, out),
            At::LeadC2 => match byte {
                0x80..=0x9f => c1(byte),
                0xa0..=0xbf => {
                    out.extend([0xc2, byte]);
                    At::Text
                }
                // A lead byte with no character after it: dropped.
                _ => {
                    self.at = At::Text;
                    return self.step(byte, out);
                }
            },
            At::Escape | At::EscapeIntermediate => match byte {
                b'[' if self.at == At::Escape => At::Csi,
                b']' | b'P' | b'X' | b'^' | b'_' if self.at == At::Escape => At::Str,
                0x20..0x30 => At::EscapeIntermediate,
                // `ESC ESC ]0;t`: the second ESC starts the sequence anew.
                ESC => At::Escape,
                _ => At::Text,
            },
            At::Csi => match byte {
                0x40..0x7f => At::Text,
                ESC => At::Escape,
                _ => At::Csi,
            },
            At::Str | At::TextEscape => match byte {
                BEL | ST => At::Text,
                b'\\' if self.at == At::TextEscape => At::Text,
                ESC => At::TextEscape,
                _ => At::Str,
            },
        };
    }

    /// One byte of text: kept when it is printable or part of a UTF-8 character.
    fn text(&mut self, byte: u8, out: &mut Vec<u8>) -> At {
        const ESC: u8 = 0x1b;
        if self.continuing > 0 && matches!(byte, 0x80..=0xbf) {
            self.continuing -= 1;
            out.push(byte);
            return At::Text;
        }
        self.continuing = 0;
        match byte {
            b'\r' => At::Return,
            ESC => At::Escape,
            0xc2 => At::LeadC2,
            // A C1 control as a raw byte (no character's continuation).
            0x80..=0x9f => c1(byte),
            0xc3..=0xf4 => {
                self.continuing = match byte {
                    0xc3..=0xdf => 1,
                    0xe0..=0xef => 2,
                    _ => 3,
                };
                out.push(byte);
                At::Text
            }
            b'\n' | b'\t' | 0x20..=0x7e | 0xa0..=0xbf => {
                out.push(byte);
                At::Text
            }
            // The other controls (a bell, a backspace, a shift) and bytes no UTF-8 has.
            _ => At::Text,
        }
    }
}

/// Where a C1 control leads: into a CSI sequence or a string, else nowhere (dropped).
fn c1(byte: u8) -> At {
    match byte {
        0x9b => At::Csi,
        0x90 | 0x98 | 0x9d | 0x9e | 0x9f => At::Str,
        _ => At::Text,
    }
}

/// `bytes` as plain text, all at once.
pub fn plain(bytes: &[u8]) -> Vec<u8> {
    Plain::default().feed(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminals_sequences_are_removed_and_its_newlines_made_plain() {
        let drawn = b"\x1b]0;agy\x07\x1b[?25l\x1b[1;32mhello\x1b[0m there\r\n\x1b(Bspin\r\rdone\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\r\n";
        assert_eq!(
            String::from_utf8(plain(drawn)).unwrap(),
            "hello there\nspindonelink\n"
        );
    }

    #[test]
    fn c1_controls_raw_or_in_utf8_are_removed_and_utf8_text_is_kept_whole() {
        // A clipboard write (OSC 52) and a screen clear, in their 8-bit forms.
        let raw = b"a\x9d52;c;ZXZpbA==\x9cb\x9b2Jc\n";
        assert_eq!(String::from_utf8(plain(raw)).unwrap(), "abc\n");
        let encoded = "a\u{9d}52;c;ZXZpbA==\u{9c}b\u{9b}2Jc\u{85}d\n";
        assert_eq!(
            String::from_utf8(plain(encoded.as_bytes())).unwrap(),
            "abcd\n"
        );
        // Continuation bytes in 0x80..0x9F belong to their characters: `€` is E2 82 AC,
        // `Ŝ` is C5 9C, `§` is C2 A7.
        let text = "€ Ŝ § café 日本 🦀\n";
        assert_eq!(String::from_utf8(plain(text.as_bytes())).unwrap(), text);
        // Split between reads, a C1 control written in UTF-8 is still removed.
        let mut filter = Plain::default();
        let mut out = filter.feed(b"x\xc2");
        out.extend(filter.feed(b"\x9b2Jy"));
        assert_eq!(String::from_utf8(out).unwrap(), "xy");
    }

    #[test]
    fn a_doubled_escape_starts_its_sequence_anew_and_leaves_no_text_of_it() {
        assert_eq!(
            String::from_utf8(plain(b"a\x1b\x1b]0;t2\x07b\n")).unwrap(),
            "ab\n"
        );
        assert_eq!(
            String::from_utf8(plain(b"a\x1b[1\x1b[31mb\n")).unwrap(),
            "ab\n"
        );
    }

    #[test]
    fn a_sequence_split_between_two_reads_is_still_removed() {
        let mut plain = Plain::default();
        let mut out = plain.feed(b"caf\xc3\xa9 \x1b[3");
        out.extend(plain.feed(b"8;5;1mred\r"));
        out.extend(plain.feed(b"\n"));
        assert_eq!(String::from_utf8(out).unwrap(), "café red\n");
    }

    #[test]
    fn a_program_on_the_far_end_sees_a_terminal() {
        let pty = open().unwrap();
        let far = File::from(pty.far);
        assert!(far.is_terminal());
        let inherited = |fd: &File| {
            let flags = fcntl(fd, FcntlArg::F_GETFD).unwrap();
            !FdFlag::from_bits_truncate(flags).contains(FdFlag::FD_CLOEXEC)
        };
        assert!(
            !inherited(&far) && !inherited(&pty.near),
            "no child inherits either end"
        );
        let size = size_of(far.as_fd()).unwrap();
        assert!(size.ws_col > 0);
    }
}
