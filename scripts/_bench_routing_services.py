"""Generated third-party service tools for ``scripts/bench_routing.py``: ``count`` tools named
``service_verb_object`` across 30 services, the 50 requests of the tool-search recall test,
and manuals at scale (as MCP servers would give them, mostly undeclared).
"""

from __future__ import annotations

from typing import Any

from _bench_routing_tools import SchemaTool, i, obj, s  # type: ignore[import-not-found]

from tools.routing import ToolCategory, external_manual

# Generated services: (name, title, {object: detail}); tools are service_verb_object.
SERVICES: list[tuple[str, str, dict[str, str]]] = [
    (
        "github",
        "GitHub",
        {
            "issue": "bug reports and feature requests",
            "pull_request": "code changes to review",
            "release": "tagged versions with notes",
            "workflow_run": "CI runs of Actions workflows",
        },
    ),
    (
        "gitlab",
        "GitLab",
        {"merge_request": "code changes to review", "pipeline": "CI/CD pipelines", "issue": "tracked work items"},
    ),
    (
        "jira",
        "Jira",
        {
            "ticket": "tracked work items with status",
            "sprint": "time-boxed iterations",
            "comment": "discussion on a ticket",
        },
    ),
    (
        "linear",
        "Linear",
        {"issue": "engineering tasks", "project": "groups of issues with a target date", "cycle": "Linear's sprints"},
    ),
    (
        "slack",
        "Slack",
        {
            "message": "chat messages in channels",
            "channel": "team conversations",
            "reminder": "timed reminders for a user",
        },
    ),
    (
        "notion",
        "Notion",
        {"page": "documents in a workspace", "database": "tables of pages", "comment": "discussion on a page"},
    ),
    ("confluence", "Confluence", {"page": "wiki pages", "space": "sections of the wiki"}),
    (
        "gdrive",
        "Google Drive",
        {"file": "documents, sheets and uploads", "folder": "folders of files", "permission": "who can access a file"},
    ),
    ("gmail", "Gmail", {"email": "messages in the mailbox", "draft": "unsent messages", "label": "mail labels"}),
    ("gcal", "Google Calendar", {"event": "meetings and appointments", "calendar": "calendars of a user"}),
    (
        "salesforce",
        "Salesforce",
        {"lead": "potential customers", "opportunity": "deals in the pipeline", "account": "customer companies"},
    ),
    ("hubspot", "HubSpot", {"contact": "people in the CRM", "deal": "sales deals", "company": "companies"}),
    (
        "stripe",
        "Stripe",
        {
            "payment": "card payments",
            "refund": "money returned to a customer",
            "invoice": "bills sent to customers",
            "subscription": "recurring billing plans",
        },
    ),
    ("shopify", "Shopify", {"order": "store orders", "product": "items for sale", "inventory": "stock levels"}),
    ("zendesk", "Zendesk", {"ticket": "customer support requests", "macro": "canned support replies"}),
    (
        "postgres",
        "PostgreSQL",
        {"query": "SQL statements against the database", "table": "database tables", "index": "table indexes"},
    ),
    ("redis", "Redis", {"key": "cached values by key", "stream": "append-only event logs"}),
    ("s3", "Amazon S3", {"object": "files stored in buckets", "bucket": "storage containers"}),
    (
        "k8s",
        "Kubernetes",
        {"pod": "running containers", "deployment": "rollouts of an application", "log": "container logs"},
    ),
    ("docker", "Docker", {"container": "running containers", "image": "container images"}),
    (
        "datadog",
        "Datadog",
        {"metric": "time series of measurements", "monitor": "alerting rules", "dashboard": "charts of metrics"},
    ),
    ("sentry", "Sentry", {"error": "application exceptions with stack traces", "release": "deployed versions"}),
    ("pagerduty", "PagerDuty", {"incident": "outages paging the on-call engineer", "schedule": "on-call rotations"}),
    ("twilio", "Twilio", {"sms": "text messages to phone numbers", "call": "phone calls"}),
    ("airtable", "Airtable", {"record": "rows of a base", "base": "Airtable databases"}),
    ("asana", "Asana", {"task": "to-dos in a project", "project": "groups of tasks"}),
    ("figma", "Figma", {"file": "design files", "comment": "feedback on a design"}),
    ("spotify", "Spotify", {"playlist": "lists of songs", "track": "songs"}),
    ("openweather", "OpenWeather", {"forecast": "weather for the coming days", "alert": "severe weather warnings"}),
    ("maps", "Google Maps", {"route": "directions between two places", "place": "businesses and addresses"}),
]

VERBS: dict[str, tuple[str, str]] = {
    "list": ("List {obj}s in {title}", "search"),
    "get": ("Get one {obj} from {title} by id", "read"),
    "create": ("Create a new {obj} in {title}", "write"),
    "update": ("Update an existing {obj} in {title}", "write"),
    "delete": ("Delete a {obj} from {title}", "write"),
    "search": ("Search {title} {obj}s by text", "search"),
}
# Verbs per object (cycled), so that services differ in what they offer.
VERB_SETS = [
    ["list", "get", "create", "update", "delete", "search"],
    ["list", "get", "create"],
    ["get", "update", "search"],
    ["list", "create", "delete"],
]


def generated_tools(count: int) -> list[SchemaTool]:
    """``count`` tools, taken round-robin across the services so that every service has some."""
    per_service: list[list[SchemaTool]] = []
    n = 0
    for name, title, objects in SERVICES:
        out: list[SchemaTool] = []
        per_service.append(out)
        for obj_name, detail in objects.items():
            verbs = VERB_SETS[n % len(VERB_SETS)]
            n += 1
            for verb in verbs:
                phrase = obj_name.replace("_", " ")
                text, kind = VERBS[verb]
                description = text.format(obj=phrase, title=title) + f" ({phrase}s are {detail})."
                props: dict[str, Any] = {}
                required: list[str] = []
                if kind in ("read",) or verb in ("update", "delete"):
                    props[f"{obj_name}_id"] = s(f"The {phrase}'s id.")
                    required.append(f"{obj_name}_id")
                if kind == "search":
                    props["query"] = s("Text to match.") if verb == "search" else s("Optional filter.")
                    props["limit"] = i("Most results.", minimum=1, maximum=100)
                    if verb == "search":
                        required.append("query")
                if kind == "write" and verb != "delete":
                    props["title"] = s(f"Title or name of the {phrase}.")
                    props["body"] = s("Main text or content.")
                    props["tags"] = {"type": "array", "items": {"type": "string"}, "description": "Labels to set."}
                    if verb == "create":
                        required.append("title")
                out.append(SchemaTool(f"{name}_{verb}_{obj_name}", description, obj(required, **props)))
    mixed = [tools[k] for k in range(max(map(len, per_service))) for tools in per_service if k < len(tools)]
    return mixed[:count]


#: 50 requests written from the generated tools' descriptions (paraphrased), and the tool
#: that answers each.
QUERIES: list[tuple[str, str]] = [
    ("file a new bug report issue on GitHub", "github_create_issue"),
    ("show the open pull requests on github", "github_list_pull_request"),
    ("find the github release notes that mention the fix", "github_search_release"),
    ("show one github pull request by its number", "github_get_pull_request"),
    ("open a merge request in gitlab", "gitlab_create_merge_request"),
    ("status of gitlab CI pipelines", "gitlab_list_pipeline"),
    ("change the dates of the current jira sprint", "jira_update_sprint"),
    ("read a comment on a jira ticket", "jira_get_comment"),
    ("which sprints are there in Jira", "jira_list_sprint"),
    ("change the status of a Linear issue", "linear_update_issue"),
    ("start a new linear project for billing", "linear_create_project"),
    ("post a message in the slack channel", "slack_create_message"),
    ("remind me in Slack tomorrow", "slack_create_reminder"),
    ("search notion pages about onboarding", "notion_search_page"),
    ("delete a notion page", "notion_delete_page"),
    ("write a new confluence wiki page", "confluence_create_page"),
    ("upload a new document to google drive", "gdrive_create_file"),
    ("give a colleague permission to access a drive file", "gdrive_create_permission"),
    ("send an email with gmail", "gmail_create_email"),
    ("save an unsent gmail draft", "gmail_create_draft"),
    ("schedule a meeting in google calendar", "gcal_create_event"),
    ("what meetings are on my calendar", "gcal_list_event"),
    ("new sales lead in salesforce", "salesforce_create_lead"),
    ("search salesforce opportunities about renewal", "salesforce_search_opportunity"),
    ("look up a hubspot contact by name", "hubspot_search_contact"),
    ("refund the customer's payment with stripe", "stripe_create_refund"),
    ("list the invoices sent to customers in stripe", "stripe_list_invoice"),
    ("charge a card payment with stripe", "stripe_create_payment"),
    ("check shopify stock levels", "shopify_list_inventory"),
    ("list recent shopify store orders", "shopify_list_order"),
    ("answer a zendesk support ticket", "zendesk_update_ticket"),
    ("run a SQL query on postgres", "postgres_create_query"),
    ("list the tables in the postgres database", "postgres_list_table"),
    ("delete a cached key from redis", "redis_delete_key"),
    ("upload a file to an S3 bucket", "s3_create_object"),
    ("download a stored object file from s3", "s3_get_object"),
    ("show the kubernetes pod logs", "k8s_list_log"),
    ("restart the kubernetes deployment rollout", "k8s_update_deployment"),
    ("search docker containers by name", "docker_search_container"),
    ("create a datadog monitor alert", "datadog_create_monitor"),
    ("list recent application exceptions in sentry", "sentry_list_error"),
    ("who is on call: get the pagerduty rotation schedule", "pagerduty_get_schedule"),
    ("page the on-call engineer with a pagerduty incident", "pagerduty_create_incident"),
    ("send an SMS text message with twilio", "twilio_create_sms"),
    ("add a row to the airtable base", "airtable_create_record"),
    ("create an asana task", "asana_create_task"),
    ("read the feedback comments on a figma design", "figma_get_comment"),
    ("make a spotify playlist", "spotify_create_playlist"),
    ("weather forecast for the next days", "openweather_list_forecast"),
    ("plan directions between two places with google maps", "maps_create_route"),
]


def scale_manuals(count: int) -> list[Any]:
    """``count`` manuals of generated service tools (as MCP servers would give, undeclared),
    with a few declared read-only and some old names, so that every resolution step has work."""
    from tools.routing import ToolManual

    names = [tool.name for tool in generated_tools(10_000)]
    out: list[Any] = []
    for k in range(count):
        name = f"{names[k % len(names)]}_{k}"[:64]
        server = name.split("_", 1)[0]
        if k % 50 == 49:
            out.append(out[-1].as_alias(f"old_{k}"))
        elif k % 7 == 0:
            out.append(ToolManual(name=name, source="mcp", server=server, category=ToolCategory.SEARCH, mutating=False))
        else:
            out.append(external_manual(name, source="mcp", server=server))
    return out
