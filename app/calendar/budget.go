package calendar

import (
	"context"
	"fmt"

	"atrium/app"
)

// MaxOccurrences is the most occurrences one request may expand (a list of
// events, free/busy over every attendee); a range that holds more is refused
// (422, naming the range's end) rather than cut short.
const MaxOccurrences = 20000

// maxSteps bounds the occurrences the rules of one request produce, in the
// range or walked on the way to it. Expansion starts at the range (see
// forward), so only rules that cannot be moved there (BYWEEKNO, BYYEARDAY,
// BYEASTER) walk from DTSTART, and a walk this long means a rule far too dense
// for its span.
const maxSteps = 10 * MaxOccurrences

// budget is the work of one request's expansion: it stops when the request's
// context is done (client gone, request timeout) or a limit is reached.
type budget struct {
	ctx context.Context
	// steps counts the occurrences the rules produced; occurrences those
	// returned.
	steps, occurrences       int
	maxSteps, maxOccurrences int
	// field and value name the input that sets the range, for the refusal.
	field string
	value any
}

// newBudget returns the budget of one request.
func newBudget(ctx context.Context) *budget {
	return &budget{ctx: ctx, maxSteps: maxSteps, maxOccurrences: MaxOccurrences, field: "query.end"}
}

// done reports the context's end, checked every 256 steps.
func (b *budget) done() error {
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("expand recurrences: %w", err)
	}
	return nil
}

// step charges one occurrence produced by a rule.
func (b *budget) step(uid string) error {
	b.steps++
	if b.steps%256 == 0 {
		if err := b.done(); err != nil {
			return err
		}
	}
	if b.steps > b.maxSteps {
		return app.Invalid(b.field, fmt.Sprintf("expanding the range takes more than %d steps: the rule of event %s is too dense for it; ask for a shorter range or change the rule", b.maxSteps, uid), b.value)
	}
	return nil
}

// emit charges n occurrences returned; a search for the first occurrence
// (first) returns at most one an event and is not charged.
func (b *budget) emit(uid string, n int, first bool) error {
	if first {
		return nil
	}
	b.occurrences += n
	if b.occurrences > b.maxOccurrences {
		return app.Invalid(b.field, fmt.Sprintf("the range holds more than %d occurrences (event %s among them): ask for a shorter range", b.maxOccurrences, uid), b.value)
	}
	return nil
}
