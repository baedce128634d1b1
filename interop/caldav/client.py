#!/usr/bin/python3
"""A CalDAV client library nobody here wrote (Debian's python3-caldav) against
Atrium: events by UID, a UID that matches nothing, expanded recurrences, sync
after a delete, tasks (save, list, complete, delete), and a calendar made for
tasks only. The library checks the server's answers itself and logs
"Deviation from expectations found" when one is wrong: any such log fails the
step it happened in.

Usage: client.py URL EMAIL APP_PASSWORD STEP   (one step per run; see STEPS)
"""
import datetime
import logging
import sys
import uuid

import caldav
from caldav.elements import cdav
from caldav.lib import error
from caldav.objects import Event

deviations = []


class Catch(logging.Handler):
    def emit(self, record):
        if "eviation" in record.getMessage():
            deviations.append(record.getMessage())


logging.getLogger().addHandler(Catch(level=logging.DEBUG))
logging.getLogger().setLevel(logging.INFO)

URL, EMAIL, PASSWORD, STEP = sys.argv[1:5]
client = caldav.DAVClient(url=URL, username=EMAIL, password=PASSWORD)
principal = client.principal()
calendar = principal.calendars()[0]
RUN = uuid.uuid4().hex[:8]


def ics(kind, uid, *lines):
    return "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Interop//python3-caldav//EN",
                        "BEGIN:" + kind, "UID:" + uid, "DTSTAMP:20300101T000000Z", *lines,
                        "END:" + kind, "END:VCALENDAR", ""])


def server_by_uid(uid):
    """What the server answers to the library's UID query (a prop-filter with
    a text-match), before the library's own check of the UIDs."""
    root, _ = calendar.build_search_xml_query(comp_class=Event, filters=[cdav.PropFilter("UID") + cdav.TextMatch(uid)])
    return calendar.search(root)


def event_by_uid():
    uid = "py-event-" + RUN
    calendar.save_event(ics("VEVENT", uid, "DTSTART:20300301T090000Z", "DTEND:20300301T100000Z", "SUMMARY:By UID"))
    calendar.save_event(ics("VEVENT", "py-other-" + RUN, "DTSTART:20300302T090000Z", "DTEND:20300302T100000Z", "SUMMARY:Other"))
    found = calendar.event_by_uid(uid)
    assert "SUMMARY:By UID" in found.data, found.data
    assert len(server_by_uid(uid)) == 1, "the server's answer to a UID query is not that event alone"


def uid_matches_nothing():
    got = server_by_uid("no-such-uid-" + RUN)
    assert not got, "a UID query that matches nothing answered %d objects" % len(got)
    try:
        calendar.event_by_uid("no-such-uid-" + RUN)
    except error.NotFoundError:
        return
    raise AssertionError("a UID that no event has found an event")


def expanded_recurrences():
    uid = "py-weekly-" + RUN
    calendar.save_event(ics("VEVENT", uid, "DTSTART:20300401T090000Z", "DTEND:20300401T093000Z",
                            "RRULE:FREQ=WEEKLY;COUNT=10", "SUMMARY:Weekly"))
    got = calendar.search(start=datetime.datetime(2030, 4, 1, tzinfo=datetime.timezone.utc),
                          end=datetime.datetime(2030, 5, 1, tzinfo=datetime.timezone.utc), event=True, expand=True)
    weekly = [e for e in got if "SUMMARY:Weekly" in e.data]
    assert len(weekly) == 5, "%d occurrences in April 2030, want 5" % len(weekly)


def sync_after_delete():
    uid = "py-gone-" + RUN
    ev = calendar.save_event(ics("VEVENT", uid, "DTSTART:20300501T090000Z", "DTEND:20300501T100000Z", "SUMMARY:Gone soon"))
    objs = calendar.objects_by_sync_token(load_objects=False)
    token = objs.sync_token
    ev.delete()
    after = calendar.objects_by_sync_token(sync_token=token, load_objects=True)
    gone = [o for o in after if o.data is None]
    assert len(gone) == 1 and str(gone[0].url).endswith(".ics"), [str(o.url) for o in after]


def tasks():
    uid = "py-task-" + RUN
    calendar.save_todo(ics("VTODO", uid, "DUE:20300601T120000Z", "SUMMARY:Write the report", "STATUS:NEEDS-ACTION",
                           "PRIORITY:1", "X-INTEROP:kept", "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Due",
                           "TRIGGER:-PT1H", "END:VALARM"))
    pending = [t for t in calendar.todos() if uid in t.data]
    assert len(pending) == 1, "the new task is not listed"
    t = calendar.todo_by_uid(uid)
    for kept in ("X-INTEROP:kept", "BEGIN:VALARM", "PRIORITY:1"):
        assert kept in t.data, "%s lost: %s" % (kept, t.data)
    t.complete()
    assert not [t for t in calendar.todos() if uid in t.data], "a completed task is still pending"
    done = [t for t in calendar.todos(include_completed=True) if uid in t.data]
    assert len(done) == 1 and "STATUS:COMPLETED" in done[0].data, "the completed task is gone"
    done[0].delete()
    try:
        calendar.todo_by_uid(uid)
    except error.NotFoundError:
        return
    raise AssertionError("a deleted task is still found")


def tasks_calendar():
    cal = principal.make_calendar(name="Tasks " + RUN, cal_id="tasks-" + RUN, supported_calendar_component_set=["VTODO"])
    assert cal.get_supported_components() == ["VTODO"], cal.get_supported_components()
    cal.save_todo(ics("VTODO", "py-t2-" + RUN, "SUMMARY:In the tasks calendar"))
    assert len(cal.todos()) == 1
    try:
        cal.save_event(ics("VEVENT", "py-e2-" + RUN, "DTSTART:20300301T090000Z", "DTEND:20300301T100000Z", "SUMMARY:No"))
    except (error.PutError, error.AuthorizationError, error.DAVError):
        pass
    else:
        raise AssertionError("an event was saved in a calendar for tasks only")
    cal.delete()


STEPS = {"event-by-uid": event_by_uid, "uid-matches-nothing": uid_matches_nothing,
         "expanded-recurrences": expanded_recurrences, "sync-after-delete": sync_after_delete,
         "tasks": tasks, "tasks-calendar": tasks_calendar}
STEPS[STEP]()
if deviations:
    sys.exit("python3-caldav reported a deviation: " + "; ".join(deviations))
