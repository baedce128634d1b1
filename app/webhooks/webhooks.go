// Package webhooks holds the rules of outgoing webhooks: subscriptions of an
// organisation to the event catalog, and their deliveries — signed HTTP POSTs that
// are retried on a schedule, can be paused, replayed and inspected.
//
// Events are written to the outbox by the module that causes them; in the same
// transaction the storage layer writes one delivery row per matching
// subscription, so an event is never lost between the write and the dispatcher.
// The Dispatcher then claims due deliveries under a lease, posts them and records
// each attempt.
package webhooks

import (
	"context"
	"slices"
	"time"

	"atrium/app"
)

// Catalog (v1) of the event types a subscription can receive (spec §6). It only
// grows; receivers must ignore types they do not know.
const (
	EventDriveFileCreated      = "drive.file.created"
	EventDriveFileUpdated      = "drive.file.updated"
	EventDriveFileDeleted      = "drive.file.deleted"
	EventDriveShareCreated     = "drive.share.created"
	EventSitesPagePublished    = "sites.page.published"
	EventOrgUserCreated        = "organization.user.created"
	EventOrgUserUpdated        = "organization.user.updated"
	EventOrgUserDeleted        = "organization.user.deleted"
	EventCalendarEventCreated  = "calendar.event.created"
	EventCalendarEventUpdated  = "calendar.event.updated"
	organizationUserTypePrefix = "organization.user."
)

var catalog = []string{
	EventDriveFileCreated, EventDriveFileUpdated, EventDriveFileDeleted, EventDriveShareCreated,
	EventSitesPagePublished,
	EventOrgUserCreated, EventOrgUserUpdated, EventOrgUserDeleted,
	EventCalendarEventCreated, EventCalendarEventUpdated,
}

// Catalog returns the event types of the v1 catalog.
func Catalog() []string { return slices.Clone(catalog) }

// InCatalog reports whether typ is an event type of the catalog.
func InCatalog(typ string) bool { return slices.Contains(catalog, typ) }

// RoutesToParent reports whether events of typ also go to the subscriptions of
// the organisation's managing reseller (CONTRACT §4: organization.user.*).
func RoutesToParent(typ string) bool {
	return len(typ) > len(organizationUserTypePrefix) && typ[:len(organizationUserTypePrefix)] == organizationUserTypePrefix
}

// Delivery statuses (CONTRACT §4).
const (
	StatusPending    = "pending"
	StatusRetrying   = "retrying"
	StatusSuccessful = "successful"
	StatusFailed     = "failed"
	StatusSkipped    = "skipped"
)

// Limits.
const (
	// SecretBytes is the size of a signing secret: 32 random bytes, 64 hex characters.
	SecretBytes = 32
	// MaxURLLength bounds a subscription URL.
	MaxURLLength = 2048
	// MaxDescriptionLength bounds a subscription description.
	MaxDescriptionLength = 500
	// ResponseBodyLimit is how much of a receiver's response body is kept per attempt.
	ResponseBodyLimit = 4 << 10
	// MaxRetryAfter caps how long a receiver's Retry-After can postpone an attempt.
	MaxRetryAfter = 24 * time.Hour
	// DefaultRetention is how long delivery history is kept.
	DefaultRetention = 30 * 24 * time.Hour
)

// DefaultSchedule is the default retry schedule: the i-th entry is the delay
// before attempt i+1 (spec §8: immediately, then 30 s, 5 min, 30 min, 2 h, 12 h).
var DefaultSchedule = []time.Duration{0, 30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// Subscription is an organisation's subscription to catalog events.
type Subscription struct {
	ID          string   `json:"id"`
	OrgID       string   `json:"organization_id"`
	URL         string   `json:"url" doc:"HTTP(S) endpoint receiving deliveries."`
	Description string   `json:"description"`
	Events      []string `json:"events" doc:"Event types delivered; empty means every event of the catalog."`
	IsActive    bool     `json:"is_active" doc:"false: paused; queued deliveries become skipped."`
	// SigningSecret is set only in the answers of create and rotate-secret.
	SigningSecret string    `json:"signing_secret,omitempty" doc:"64 hex characters; returned only on create and rotate-secret."`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// DayAttempts is how many delivery attempts of a subscription started on one
// UTC day, by outcome.
type DayAttempts struct {
	Day       time.Time // 00:00 UTC
	Succeeded int       // answered 2xx
	Failed    int       // anything else
}

// Delivery is one event sent to one subscription, with its attempts.
type Delivery struct {
	ID             string     `json:"id" doc:"Stable delivery id, sent as X-Service-Delivery."`
	SubscriptionID string     `json:"subscription_id"`
	EventID        string     `json:"event_id" doc:"The event id, stable across retries and replays (body field id)."`
	EventType      string     `json:"event_type"`
	Status         string     `json:"status" enum:"pending,retrying,successful,failed,skipped"`
	Attempts       int        `json:"attempts" doc:"Number of attempts made so far (replays included)."`
	NextAttemptAt  *time.Time `json:"next_attempt_at" doc:"When the next attempt is due; null when none is scheduled."`
	ResponseStatus *int       `json:"response_status" doc:"HTTP status of the last attempt; null when none answered."`
	Error          string     `json:"error" doc:"Why the last attempt failed; empty on success."`
	DurationMS     *int64     `json:"duration_ms" doc:"Duration of the last attempt in milliseconds."`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// AttemptLog lists every attempt, oldest first: what was sent and what came back.
	AttemptLog []DeliveryAttempt `json:"attempt_log" doc:"Every attempt, oldest first: the request sent and the response received."`

	// Body is the serialized event, identical for every attempt.
	Body []byte `json:"-"`
}

// DeliveryAttempt is one HTTP request of a delivery and its outcome.
type DeliveryAttempt struct {
	Number          int                 `json:"number"`
	StartedAt       time.Time           `json:"started_at"`
	RequestHeaders  map[string][]string `json:"request_headers" doc:"Headers sent (signature and timestamp of this attempt)."`
	RequestBody     string              `json:"request_body" doc:"The body sent: identical for every attempt of a delivery."`
	ResponseStatus  *int                `json:"response_status"`
	ResponseHeaders map[string][]string `json:"response_headers"`
	ResponseBody    string              `json:"response_body" doc:"The first 4 KiB of the response body."`
	DurationMS      int64               `json:"duration_ms"`
	Error           string              `json:"error"`
	Outcome         string              `json:"outcome" enum:"successful,retrying,failed,skipped" doc:"The delivery status this attempt led to."`
}

// Job is a delivery claimed by a dispatcher: what it needs to post it.
type Job struct {
	DeliveryID     string
	SubscriptionID string
	EventType      string
	URL            string
	Secret         string
	Body           []byte
	// Attempt is the number of this attempt (1-based, over the delivery's life).
	Attempt int
	// CycleAttempt is the number of this attempt since the delivery was created or
	// last replayed; it picks the retry delay.
	CycleAttempt int
	// Lease fences the result: only the holder of the lease may record it.
	Lease string
}

// Result is what a dispatcher records after an attempt.
type Result struct {
	Job     Job
	Attempt DeliveryAttempt
	// Success is true when the receiver answered 2xx in time.
	Success bool
	// RetryAfter is a receiver's Retry-After on 429/503 (zero when absent).
	RetryAfter time.Duration
	// Interrupted is true when shutdown cancelled the attempt: it is not counted,
	// the delivery is released to be attempted again.
	Interrupted bool
}

// SubscriptionPatch is a partial update; nil fields are unchanged.
type SubscriptionPatch struct {
	URL         *string
	Description *string
	Events      *[]string
	IsActive    *bool
}

// Store is what the webhooks service and dispatcher need. Missing rows (or rows of
// another organisation) are not_found.
type Store interface {
	app.TxRunner

	CreateSubscription(ctx context.Context, s Subscription, secret string) error
	// Subscription returns a subscription of org (without its secret).
	Subscription(ctx context.Context, orgID, id string) (Subscription, error)
	Subscriptions(ctx context.Context, orgID string, p app.PageRequest) ([]Subscription, error)
	// UpdateSubscription writes url, description, events and is_active.
	UpdateSubscription(ctx context.Context, s Subscription) error
	SetSecret(ctx context.Context, orgID, id, secret string, at time.Time) error
	// DeleteSubscription deletes the subscription and its delivery history.
	DeleteSubscription(ctx context.Context, orgID, id string) error

	// SkipQueued turns the subscription's queued deliveries (pending or retrying,
	// not in flight) into skipped and returns how many.
	SkipQueued(ctx context.Context, subscriptionID string, at time.Time) (int64, error)
	// Deliveries lists a subscription's deliveries, most recent first, with
	// their attempts.
	Deliveries(ctx context.Context, subscriptionID string, p app.PageRequest) ([]Delivery, error)
	Delivery(ctx context.Context, subscriptionID, id string) (Delivery, error)
	// AttemptsByDay counts a subscription's delivery attempts started at or
	// after since, per UTC day, oldest day first; days without any are left out.
	AttemptsByDay(ctx context.Context, subscriptionID string, since time.Time) ([]DayAttempts, error)
	// Requeue makes a failed or skipped delivery pending again, due at `at`, with
	// a fresh retry cycle; any other status is conflict.
	Requeue(ctx context.Context, subscriptionID, id string, at time.Time) error

	// Claim leases up to limit due deliveries of active subscriptions (at most
	// perSub per subscription, excluding the subscriptions in busy) until
	// leaseUntil, in one write transaction, so two dispatchers never hold the
	// same attempt. The first attempt of a cycle is due firstDelay after its
	// next_attempt_at (the schedule's first entry).
	Claim(ctx context.Context, now, leaseUntil time.Time, limit, perSub int, busy map[string]int, firstDelay time.Duration) ([]Job, error)
	// Complete records the results of attempts in one transaction. The schedule
	// decides the next attempt of failures; a result whose lease was lost is
	// dropped.
	Complete(ctx context.Context, now time.Time, results []Result, schedule []time.Duration) error
	// Prune deletes finished deliveries created before cutoff.
	Prune(ctx context.Context, cutoff time.Time) (int64, error)
}
