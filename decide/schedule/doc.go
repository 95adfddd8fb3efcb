// Package schedule compiles and evaluates compute instances' start/stop
// schedules (the `schedules.compute_start_stop` key): five-field cron
// expressions and Logic Apps style recurrences, each in a time zone named
// the Windows way, as Azure writes it ("Pacific Standard Time"), or the
// IANA way ("America/Los_Angeles").
//
// It is pure: no function reads the clock; every decision takes the times
// it compares, so the rules are tested on fixed times.
//
// Time zones follow daylight saving time through the IANA rules, unlike
// Azure's labels: `0 18 * * *` in "Pacific Standard Time" fires at 18:00 on
// the clocks of Los Angeles all year, 02:00 UTC in winter and 01:00 UTC in
// summer. Where DST bends the clock, each wall-clock time fires once:
//
//   - a time skipped when clocks go forward fires at the first instant
//     after the gap (`30 2 * * *` fires at 03:00 PDT on the US
//     spring-forward day);
//   - a time repeated when clocks go back fires at its first occurrence
//     only (`30 1 * * *` fires at 01:30 PDT on the US fall-back day, not
//     again at 01:30 PST).
//
// Minute and hour recurrences count elapsed time instead, so "every 2
// hours" stays two hours apart across a DST change.
//
// Recurrence intervals (every 2 weeks) are counted from start_time or,
// without one, from the Unix epoch in the schedule's zone: fixed, not
// dependent on when a schedule was saved. See compileRecurrence.
//
// Firings missed while the server was down: Due and Decide return the
// latest firing since the last evaluation, once, never a backlog, and
// across an instance's schedules only the latest counts. A firing older
// than a bound (MissedFiringMaxAge, 12 hours, by default) is reported as
// stale: recorded, not carried out.
package schedule
