package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/webhooks"
)

// WebhookPath names a webhook subscription of the caller's organisation.
type WebhookPath struct {
	ID string `path:"id" doc:"A subscription of the caller's organisation (any other answers 404)."`
}

// DeliveryPath names a delivery of a subscription.
type DeliveryPath struct {
	WebhookPath
	DeliveryID string `path:"delivery_id"`
}

// WebhookSubscription is a subscription as the API shows it (named apart from
// the partner API's plan subscription in the OpenAPI description).
type WebhookSubscription struct{ webhooks.Subscription }

// WebhookDelivery is a delivery with its attempts.
type WebhookDelivery struct{ webhooks.Delivery }

func subOut(s webhooks.Subscription, err error) (*body[WebhookSubscription], error) {
	return out(WebhookSubscription{s}), err
}

func wrapAll[T, W any](items []T, err error, wrap func(T) W) ([]W, error) {
	if err != nil {
		return nil, err
	}
	out := make([]W, len(items))
	for i, v := range items {
		out[i] = wrap(v)
	}
	return out, nil
}

// WebhookCreate is the body of POST /webhooks/subscriptions.
type WebhookCreate struct {
	URL         string   `json:"url" maxLength:"2048" doc:"http(s) endpoint; loopback, private, link-local and metadata addresses are refused unless the server allows private targets."`
	Description string   `json:"description,omitempty" maxLength:"500"`
	Events      []string `json:"events,omitempty" doc:"Event types of the catalog; an empty array or no array subscribes to every event (also those added to the catalog later)."`
}

// WebhookUpdate is the body of PATCH /webhooks/subscriptions/{id}.
type WebhookUpdate struct {
	URL         *string   `json:"url,omitempty" maxLength:"2048"`
	Description *string   `json:"description,omitempty" maxLength:"500"`
	Events      *[]string `json:"events,omitempty" doc:"Replaces the list; an empty array means every event."`
	IsActive    *bool     `json:"is_active,omitempty" doc:"false pauses the subscription: queued deliveries become skipped (one in flight finishes). true resumes it; skipped deliveries are not resent but can be replayed."`
}

const webhookDoc = "\n\nDeliveries are HTTP POSTs with headers `Content-Type: application/json`, `X-Service-Event`, `X-Service-Delivery`, `X-Service-Timestamp` (Unix seconds) and `X-Service-Signature-256` (`sha256=` + lowercase hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the subscription's `signing_secret`), and the body `{id, type, created_at, organization_id, data}`. A 2xx answer within the timeout (10 s by default) is success; anything else is retried after 30 s, 5 min, 30 min, 2 h and 12 h (six attempts), then the delivery is `failed`. Redirects are not followed. A `Retry-After` on 429 or 503 is honoured when longer than the schedule."

func webhookOp(method, path, id, summary string) huma.Operation {
	o := op(method, "/webhooks/subscriptions"+path, id, summary, "Webhooks", app.ScopeAdmin, app.ScopeWebhooksManage)
	if path != "" {
		o.Errors = append(o.Errors, http.StatusNotFound)
	}
	return o
}

func registerWebhooks(api huma.API, d Deps) {
	ws := d.Webhooks
	if ws == nil {
		return
	}
	list := webhookOp(http.MethodGet, "", "listWebhookSubscriptions", "List webhook subscriptions")
	list.Description = "The caller's organisation's subscriptions, oldest first. Requires `admin:access` or `webhooks:manage`. The signing secret is never listed."
	huma.Register(api, list, func(ctx context.Context, in *CursorQuery) (*body[app.Page[WebhookSubscription]], error) {
		p := principal(ctx)
		pg, err := page(d.Cursors, "webhooks:"+p.OrgID, *in, func(pr app.PageRequest) ([]WebhookSubscription, error) {
			subs, err := ws.List(ctx, p, pr)
			return wrapAll(subs, err, func(s webhooks.Subscription) WebhookSubscription { return WebhookSubscription{s} })
		}, func(s WebhookSubscription) string { return s.ID })
		return out(pg), err
	})

	create := idempotent(webhookOp(http.MethodPost, "", "createWebhookSubscription", "Create a webhook subscription"))
	create.Description = "Creates an active subscription. The answer (201) carries `signing_secret` (64 hex characters): store it, it is shown again only by rotate-secret. An event type outside the catalog is 422." + webhookDoc + create.Description
	huma.Register(api, create, func(ctx context.Context, in *struct{ Body WebhookCreate }) (*body[WebhookSubscription], error) {
		return subOut(ws.Create(ctx, principal(ctx), webhooks.CreateInput(in.Body)))
	})

	huma.Register(api, webhookOp(http.MethodGet, "/{id}", "getWebhookSubscription", "Get a webhook subscription"),
		func(ctx context.Context, in *WebhookPath) (*body[WebhookSubscription], error) {
			return subOut(ws.Get(ctx, principal(ctx), in.ID))
		})

	huma.Register(api, webhookOp(http.MethodPatch, "/{id}", "updateWebhookSubscription", "Update, pause or resume a webhook subscription"),
		func(ctx context.Context, in *struct {
			WebhookPath
			Body WebhookUpdate
		}) (*body[WebhookSubscription], error) {
			return subOut(ws.Update(ctx, principal(ctx), in.ID, webhooks.SubscriptionPatch(in.Body)))
		})

	del := webhookOp(http.MethodDelete, "/{id}", "deleteWebhookSubscription", "Delete a webhook subscription and its delivery history")
	huma.Register(api, del, func(ctx context.Context, in *WebhookPath) (*struct{}, error) {
		return nil, ws.Delete(ctx, principal(ctx), in.ID)
	})

	rot := status(webhookOp(http.MethodPost, "/{id}/rotate-secret", "rotateWebhookSecret", "Rotate the signing secret"), http.StatusOK)
	rot.Description = "Returns the subscription with a new `signing_secret`, shown once. The old secret is invalid immediately: every later attempt, retries included, is signed with the new one."
	huma.Register(api, rot, func(ctx context.Context, in *WebhookPath) (*body[WebhookSubscription], error) {
		return subOut(ws.RotateSecret(ctx, principal(ctx), in.ID))
	})

	dl := webhookOp(http.MethodGet, "/{id}/deliveries", "listWebhookDeliveries", "List a subscription's deliveries")
	dl.Description = "Most recent first. Each delivery has its status (`pending`, `retrying`, `successful`, `failed`, `skipped`), the number of attempts, the next attempt time, the last response status, error and duration, and `attempt_log`: every attempt with the request headers and body sent and the response status, headers and first 4 KiB of body received. Delivery history is kept 30 days (configurable)."
	huma.Register(api, dl, func(ctx context.Context, in *struct {
		WebhookPath
		CursorQuery
	}) (*body[app.Page[WebhookDelivery]], error) {
		p := principal(ctx)
		pg, err := page(d.Cursors, "webhook-deliveries:"+in.ID, in.CursorQuery, func(pr app.PageRequest) ([]WebhookDelivery, error) {
			ds, err := ws.Deliveries(ctx, p, in.ID, pr)
			return wrapAll(ds, err, func(d webhooks.Delivery) WebhookDelivery { return WebhookDelivery{d} })
		}, func(d WebhookDelivery) string { return d.ID })
		return out(pg), err
	})

	rp := errs(status(webhookOp(http.MethodPost, "/{id}/deliveries/{delivery_id}/replay", "replayWebhookDelivery", "Replay a failed or skipped delivery"), http.StatusOK), http.StatusConflict)
	rp.Description = "Re-queues a `failed` or `skipped` delivery for a new cycle of attempts, with the same delivery id and event id; answers 200 with the delivery. Any other status, or a paused subscription, is 409 `conflict`."
	huma.Register(api, rp, func(ctx context.Context, in *DeliveryPath) (*body[WebhookDelivery], error) {
		dv, err := ws.Replay(ctx, principal(ctx), in.ID, in.DeliveryID)
		return out(WebhookDelivery{dv}), err
	})
}
