'use strict'
// The control bytes the CLI's terminal guard and its sequence state read (C0, and the 8-bit C1
// forms: ST, OSC, APC, DCS).

module.exports = { ESC: 0x1b, BEL: 0x07, CAN: 0x18, SUB: 0x1a, ST8: 0x9c, OSC8: 0x9d, APC8: 0x9f, DCS8: 0x90 }
