package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Delivery headers (spec §6).
const (
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderSignature = "X-Service-Signature-256"
)

// Tolerance is how far a receiver should accept a timestamp from its clock.
const Tolerance = 300 * time.Second

// Sign returns the X-Service-Signature-256 value of body signed at timestamp
// (Unix seconds): "sha256=" + lowercase hex HMAC-SHA256(secret, "<timestamp>.<body>").
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery as a receiver should: the timestamp within Tolerance
// of now and the signature equal, compared in constant time.
func Verify(secret, timestamp, signature string, body []byte, now time.Time) bool {
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return false
	}
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(strings.TrimSpace(signature)))
}

// TimeFormat is the format of created_at in delivery bodies: ISO 8601, UTC,
// with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// eventBody is the delivery body, fields in the order of spec §6.
type eventBody struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	OrgID     string          `json:"organization_id"`
	Data      json.RawMessage `json:"data"`
}

// Body serializes the delivery body of an event once; every attempt and replay
// of its deliveries sends these exact bytes. data is the event's data as JSON
// (null or empty becomes {}).
func Body(id, typ string, createdAt time.Time, orgID string, data []byte) ([]byte, error) {
	if len(data) == 0 || string(data) == "null" {
		data = []byte("{}")
	}
	return json.Marshal(eventBody{ID: id, Type: typ, CreatedAt: createdAt.UTC().Format(TimeFormat), OrgID: orgID, Data: data})
}
