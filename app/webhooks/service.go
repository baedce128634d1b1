package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"atrium/app"
)

// Service applies the subscription rules. Every method takes the caller, checks
// `admin:access` or `webhooks:manage`, and works only on the caller's
// organisation: another organisation's subscription is not_found.
type Service struct {
	store        Store
	audit        app.Auditor
	clock        app.Clock
	allowPrivate bool
	resolver     Resolver
	// wake, when set, is called after a change that makes deliveries due.
	wake func()
}

// Options tune the service.
type Options struct {
	// AllowPrivateTargets accepts loopback and private addresses as targets.
	AllowPrivateTargets bool
	// Resolver resolves target host names (net.DefaultResolver in the
	// wiring: app/ reaches no network itself); nil resolves none.
	Resolver Resolver
}

// NewService returns the webhooks service.
func NewService(store Store, audit app.Auditor, clock app.Clock, o Options) *Service {
	return &Service{store: store, audit: audit, clock: clock, allowPrivate: o.AllowPrivateTargets, resolver: o.Resolver}
}

// OnQueued registers fn to be called after a replay queues a delivery (the
// dispatcher's wake-up). Errors: none of its own.
func (s *Service) OnQueued(fn func()) { s.wake = fn }

func authorize(p *app.Principal) error {
	if p == nil {
		return app.Errorf(app.EUnauthorized, "Authentication is required.")
	}
	if !p.Scopes.Has(app.ScopeAdmin) && !p.Scopes.Has(app.ScopeWebhooksManage) {
		return app.Errorf(app.EInsufficientScope, "The token lacks the scope %q or %q.", app.ScopeAdmin, app.ScopeWebhooksManage)
	}
	return nil
}

func (s *Service) record(ctx context.Context, p *app.Principal, action, id string, changed ...string) error {
	if s.audit == nil {
		return nil
	}
	actor := p.UserID
	if actor == "" && p.ServicePrincipalID != "" {
		actor = "sp:" + p.ServicePrincipalID
	}
	return s.audit.Record(ctx, app.AuditEntry{Module: "webhooks", Action: action, ActorID: actor, TargetType: "webhook_subscription",
		TargetID: id, OrgID: p.OrgID, ChangedFields: changed, CreatedAt: s.clock.Now()})
}

// checkEvents validates an events list: catalog types only, no duplicates. It
// returns the list (empty, never nil, meaning all).
func checkEvents(v *app.Validator, events []string) []string {
	out := []string{}
	for i, e := range events {
		e = strings.TrimSpace(e)
		loc := fmt.Sprintf("body.events[%d]", i)
		switch {
		case !InCatalog(e):
			v.Add(loc, "is not an event type of the catalog ("+strings.Join(catalog, ", ")+")", e)
		case slices.Contains(out, e):
			v.Add(loc, "is listed twice", e)
		default:
			out = append(out, e)
		}
	}
	return out
}

// CreateInput is the body of a new subscription.
type CreateInput struct {
	URL         string
	Description string
	Events      []string
}

// Create makes an active subscription with a fresh signing secret, which the
// answer carries (the only time besides rotate-secret). Errors:
// insufficient_scope (neither admin:access nor webhooks:manage),
// validation_failed (the url, the description or an event type).
func (s *Service) Create(ctx context.Context, p *app.Principal, in CreateInput) (Subscription, error) {
	if err := authorize(p); err != nil {
		return Subscription{}, err
	}
	var v app.Validator
	in.URL = strings.TrimSpace(in.URL)
	if msg := checkURL(ctx, in.URL, s.allowPrivate, s.resolver); msg != "" {
		v.Add("body.url", msg, in.URL)
	}
	in.Description = strings.TrimSpace(in.Description)
	v.Check(len(in.Description) <= MaxDescriptionLength, "body.description", fmt.Sprintf("must be at most %d characters", MaxDescriptionLength), in.Description)
	events := checkEvents(&v, in.Events)
	if err := v.Err(); err != nil {
		return Subscription{}, err
	}
	now := s.clock.Now()
	sub := Subscription{ID: app.NewID(), OrgID: p.OrgID, URL: in.URL, Description: in.Description, Events: events,
		IsActive: true, CreatedAt: now, UpdatedAt: now}
	secret := app.RandomHex(SecretBytes)
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateSubscription(ctx, sub, secret); err != nil {
			return err
		}
		return s.record(ctx, p, "subscription.created", sub.ID)
	})
	if err != nil {
		return Subscription{}, err
	}
	sub.SigningSecret = secret
	return sub, nil
}

// Get returns one of the caller's subscriptions. Errors: insufficient_scope
// (neither admin:access nor webhooks:manage), not_found (no such subscription
// in the organisation).
func (s *Service) Get(ctx context.Context, p *app.Principal, id string) (Subscription, error) {
	if err := authorize(p); err != nil {
		return Subscription{}, err
	}
	return s.get(ctx, p, id)
}

func (s *Service) get(ctx context.Context, p *app.Principal, id string) (Subscription, error) {
	sub, err := s.store.Subscription(ctx, p.OrgID, id)
	if app.ErrorCode(err) == app.ENotFound {
		return Subscription{}, app.Errorf(app.ENotFound, "No webhook subscription %s in your organisation.", id)
	}
	return sub, err
}

// List lists the caller's subscriptions, oldest first. Errors:
// insufficient_scope (neither admin:access nor webhooks:manage).
func (s *Service) List(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]Subscription, error) {
	if err := authorize(p); err != nil {
		return nil, err
	}
	return s.store.Subscriptions(ctx, p.OrgID, pr)
}

// Update changes url, description, events and is_active. Pausing turns the
// queued deliveries into skipped (one in flight finishes); resuming resends
// nothing — skipped deliveries can be replayed. Errors: insufficient_scope
// (neither admin:access nor webhooks:manage), validation_failed (the url, the
// description or an event type), not_found (no such subscription in the
// organisation).
func (s *Service) Update(ctx context.Context, p *app.Principal, id string, in SubscriptionPatch) (Subscription, error) {
	if err := authorize(p); err != nil {
		return Subscription{}, err
	}
	var v app.Validator
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		in.URL = &u
		if msg := checkURL(ctx, u, s.allowPrivate, s.resolver); msg != "" {
			v.Add("body.url", msg, u)
		}
	}
	if in.Description != nil {
		d := strings.TrimSpace(*in.Description)
		in.Description = &d
		v.Check(len(d) <= MaxDescriptionLength, "body.description", fmt.Sprintf("must be at most %d characters", MaxDescriptionLength), d)
	}
	var events []string
	if in.Events != nil {
		events = checkEvents(&v, *in.Events)
	}
	if err := v.Err(); err != nil {
		return Subscription{}, err
	}
	var out Subscription
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		sub, err := s.get(ctx, p, id)
		if err != nil {
			return err
		}
		var changed []string
		if in.URL != nil && *in.URL != sub.URL {
			sub.URL = *in.URL
			changed = append(changed, "url")
		}
		if in.Description != nil && *in.Description != sub.Description {
			sub.Description = *in.Description
			changed = append(changed, "description")
		}
		if in.Events != nil && !slices.Equal(events, sub.Events) {
			sub.Events = events
			changed = append(changed, "events")
		}
		pausing := false
		if in.IsActive != nil && *in.IsActive != sub.IsActive {
			pausing = !*in.IsActive
			sub.IsActive = *in.IsActive
			changed = append(changed, "is_active")
		}
		if len(changed) == 0 {
			out = sub
			return nil
		}
		sub.UpdatedAt = s.clock.Now()
		if err := s.store.UpdateSubscription(ctx, sub); err != nil {
			return err
		}
		if pausing {
			if _, err := s.store.SkipQueued(ctx, sub.ID, sub.UpdatedAt); err != nil {
				return err
			}
		}
		out = sub
		return s.record(ctx, p, "subscription.updated", sub.ID, changed...)
	})
	return out, err
}

// RotateSecret replaces the signing secret; the old one stops working at once
// (the next attempt is signed with the new one). The answer carries the secret.
// Errors: insufficient_scope (neither admin:access nor webhooks:manage),
// not_found (no such subscription in the organisation).
func (s *Service) RotateSecret(ctx context.Context, p *app.Principal, id string) (Subscription, error) {
	if err := authorize(p); err != nil {
		return Subscription{}, err
	}
	secret := app.RandomHex(SecretBytes)
	var out Subscription
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		sub, err := s.get(ctx, p, id)
		if err != nil {
			return err
		}
		sub.UpdatedAt = s.clock.Now()
		if err := s.store.SetSecret(ctx, p.OrgID, id, secret, sub.UpdatedAt); err != nil {
			return err
		}
		out = sub
		return s.record(ctx, p, "subscription.secret_rotated", id, "signing_secret")
	})
	if err != nil {
		return Subscription{}, err
	}
	out.SigningSecret = secret
	return out, nil
}

// Delete removes a subscription and its delivery history. Errors:
// insufficient_scope (neither admin:access nor webhooks:manage), not_found (no
// such subscription in the organisation).
func (s *Service) Delete(ctx context.Context, p *app.Principal, id string) error {
	if err := authorize(p); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.get(ctx, p, id); err != nil {
			return err
		}
		if err := s.store.DeleteSubscription(ctx, p.OrgID, id); err != nil {
			return err
		}
		return s.record(ctx, p, "subscription.deleted", id)
	})
}

// Deliveries lists a subscription's deliveries, most recent first, each with its
// attempts. Errors: insufficient_scope (neither admin:access nor
// webhooks:manage), not_found (no such subscription in the organisation).
func (s *Service) Deliveries(ctx context.Context, p *app.Principal, id string, pr app.PageRequest) ([]Delivery, error) {
	if _, err := s.Get(ctx, p, id); err != nil {
		return nil, err
	}
	return s.store.Deliveries(ctx, id, pr)
}

// AttemptsByDay counts the subscription's delivery attempts since `since`
// per UTC day, all of them (the delivery list is a page of the newest). Errors:
// insufficient_scope (neither admin:access nor webhooks:manage), not_found (no
// such subscription in the organisation).
func (s *Service) AttemptsByDay(ctx context.Context, p *app.Principal, id string, since time.Time) ([]DayAttempts, error) {
	if _, err := s.Get(ctx, p, id); err != nil {
		return nil, err
	}
	return s.store.AttemptsByDay(ctx, id, since)
}

// Replay re-queues a failed or skipped delivery with the same delivery and event
// id, for a new cycle of attempts. Other statuses are conflict, and so is a
// paused subscription (resume it first). Errors: insufficient_scope (neither
// admin:access nor webhooks:manage), not_found (no such subscription in the
// organisation, no such delivery of it), conflict (a delivery neither failed
// nor skipped, a paused subscription).
func (s *Service) Replay(ctx context.Context, p *app.Principal, id, deliveryID string) (Delivery, error) {
	if err := authorize(p); err != nil {
		return Delivery{}, err
	}
	var out Delivery
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		sub, err := s.get(ctx, p, id)
		if err != nil {
			return err
		}
		d, err := s.store.Delivery(ctx, id, deliveryID)
		if app.ErrorCode(err) == app.ENotFound {
			return app.Errorf(app.ENotFound, "No delivery %s in webhook subscription %s.", deliveryID, id)
		}
		if err != nil {
			return err
		}
		if d.Status != StatusFailed && d.Status != StatusSkipped {
			return app.Errorf(app.EConflict, "Only a failed or skipped delivery can be replayed; this one is %s.", d.Status)
		}
		if !sub.IsActive {
			return app.Errorf(app.EConflict, "The subscription is paused; resume it (is_active: true) before replaying deliveries.")
		}
		if err := s.store.Requeue(ctx, id, deliveryID, s.clock.Now()); err != nil {
			return err
		}
		if out, err = s.store.Delivery(ctx, id, deliveryID); err != nil {
			return err
		}
		return s.record(ctx, p, "delivery.replayed", id)
	})
	if err == nil && s.wake != nil {
		s.wake()
	}
	return out, err
}
