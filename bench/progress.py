"""A bench's progress on stderr, as the tools report theirs: the phase, steps done of its
total, the time elapsed and an estimate of the time left (from the mean step so far). On a
terminal one line is redrawn in place; in a log every step is a line of its own. quiet:
nothing (the benches' --quiet).

    p = Progress('bench-deployment', quiet=a.quiet)
    p.phase('serving', total=6)
    for ...:
        p.step('seed 1: plan-run --serve --compare all')
        ...
    p.done()
"""
import sys
import time


def _clock(s):
    s = int(round(s))
    return f'{s // 3600}h{s // 60 % 60:02d}m' if s >= 3600 else f'{s // 60}m{s % 60:02d}s'


class Progress:
    def __init__(self, name, quiet=False, out=sys.stderr):
        self.name, self.quiet, self.out = name, quiet, out
        self.tty = hasattr(out, 'isatty') and out.isatty()
        self.t0 = time.monotonic()
        self.label, self.total, self.count, self.phase_t0 = '', 0, 0, self.t0
        self.redrawn = False

    def phase(self, label, total):
        self.label, self.total, self.count, self.phase_t0 = label, max(0, int(total)), 0, time.monotonic()

    def line(self, what):
        """The line step() writes before step `count + 1` of the phase (also for tests)."""
        now = time.monotonic()
        eta = ''
        if 0 < self.count < self.total:
            left = (now - self.phase_t0) / self.count * (self.total - self.count)
            eta = f', ETA {_clock(left)}'
        at = f' {self.count + 1}/{self.total}' if self.total else ''
        return f'{self.name}: {self.label}{at}: {what} (elapsed {_clock(now - self.t0)}{eta})'

    def step(self, what):
        if not self.quiet:
            text = self.line(what)
            if self.tty:
                self.out.write('\r\033[K' + text)
                self.redrawn = True
            else:
                self.out.write(text + '\n')
            self.out.flush()
        self.count += 1

    def done(self):
        if self.quiet:
            return
        text = f'{self.name}: done in {_clock(time.monotonic() - self.t0)}'
        self.out.write(('\r\033[K' if self.redrawn else '') + text + '\n')
        self.out.flush()


def _self_test():
    """The log form: a line per step with done/total, elapsed and (after the first step) an ETA;
    quiet writes nothing."""
    import io
    out = io.StringIO()
    p = Progress('bench-x', out=out)
    p.phase('serving', 3)
    for what in ('seed 1', 'seed 2', 'seed 3'):
        p.step(what)
    p.done()
    lines = out.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert lines[0].startswith('bench-x: serving 1/3: seed 1 (elapsed 0m0') and 'ETA' not in lines[0], lines[0]
    assert lines[1].startswith('bench-x: serving 2/3: seed 2 (elapsed ') and ', ETA 0m0' in lines[1], lines[1]
    assert lines[3].startswith('bench-x: done in '), lines[3]
    quiet = io.StringIO()
    q = Progress('bench-x', quiet=True, out=quiet)
    q.phase('serving', 1)
    q.step('seed 1')
    q.done()
    assert quiet.getvalue() == '', quiet.getvalue()
    print('progress: log lines, ETA and quiet as documented')


if __name__ == '__main__':
    _self_test()
