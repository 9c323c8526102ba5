// posthog-2024 create and update also take form-encoded and multipart bodies (the real service's own
// UI and tests send multipart), read the way its serializer reads them; seed takes JSON only.

import { describe, expect, it } from "vitest";
import { type EmulatorClient, startTestEmulator } from "../support/emulator.js";
import { errorBody, obj } from "../support/http-client.js";

const CONFIGS = "/api/projects/1/plugin_configs";
const FORM = "application/x-www-form-urlencoded";

const start = () => startTestEmulator({ profile: "posthog-2024" });

function postForm(client: EmulatorClient, path: string, text: string, contentType = FORM) {
  return client.request("POST", path, { rawBody: text, headers: { "content-type": contentType } });
}

function patchForm(client: EmulatorClient, path: string, text: string, contentType = FORM) {
  return client.request("PATCH", path, { rawBody: text, headers: { "content-type": contentType } });
}

function stored(client: EmulatorClient, id: unknown) {
  return client.emulator.snapshot().records.find((record) => record.id === id);
}

/** A multipart body with CRLF line ends; `close: false` leaves out the closing boundary. */
function multipart(boundary: string, parts: { headers: string[]; content: string }[], close = true): string {
  const body = parts.map(
    (part) => `--${boundary}\r\n${part.headers.join("\r\n")}\r\n\r\n${part.content}\r\n`,
  );
  return `${body.join("")}${close ? `--${boundary}--\r\n` : ""}`;
}

function formOf(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  return form;
}

const field = (name: string, content: string) => ({
  headers: [`Content-Disposition: form-data; name="${name}"`],
  content,
});

describe("form bodies on posthog-2024", () => {
  it("creates and updates from a multipart form as the service's UI sends it, config and attachment included", async () => {
    const client = await start();
    const form = new FormData();
    form.set("plugin", "6");
    form.set("order", "4");
    form.set("enabled", "true");
    form.set("description", "Nightly export");
    form.set("config", JSON.stringify({ dataset: "events" }));
    form.set(
      "add_attachment[googleCloudKeyJson]",
      new Blob(["{}"], { type: "application/json" }),
      "key.json",
    );
    const created = await client.request("POST", CONFIGS, { form });
    expect(created.status).toBe(201);
    expect(obj(created.body)).toMatchObject({
      plugin: 6,
      order: 4,
      enabled: true,
      name: "BigQuery Export",
      description: "Nightly export",
      config: {
        dataset: "events",
        googleCloudKeyJson: { uid: 1, saved: true, size: 2, name: "key.json", type: "application/json" },
      },
    });

    const update = new FormData();
    update.set("enabled", "off");
    update.set("order", "9.0");
    const updated = await client.request("PATCH", `${CONFIGS}/${obj(created.body).id}`, { form: update });
    expect(updated.status).toBe(200);
    // A form without `config` leaves it, and the attachment, as they were.
    expect(obj(updated.body)).toMatchObject({
      enabled: false,
      order: 9,
      description: "Nightly export",
      config: obj(created.body).config,
    });
  });

  // PostHog's test_create_plugin_config and test_plugin_config_attachment, against the emulator.
  it("sets config from a form's config field, on create and update, and shows attachments in it", async () => {
    const client = await start();
    const created = await client.request("POST", CONFIGS, {
      form: formOf({ plugin: "6", enabled: "true", order: "0", config: JSON.stringify({ bar: "moop" }) }),
    });
    expect([created.status, obj(created.body).config]).toEqual([201, { bar: "moop" }]);
    const path = `${CONFIGS}/${obj(created.body).id}`;
    const soup = await client.request("PATCH", path, {
      form: formOf({ enabled: "false", order: "1", config: JSON.stringify({ bar: "soup" }) }),
    });
    expect(obj(soup.body)).toMatchObject({ enabled: false, order: 1, config: { bar: "soup" } });
    // Form-encoded as well; the list shows config as the object too.
    expect(
      (await patchForm(client, path, `config=${encodeURIComponent('{"bar":"soup","n":[1,{"x":null}]}')}`))
        .status,
    ).toBe(200);
    const listed = obj((await client.get(CONFIGS)).body).results as Record<string, unknown>[];
    expect(listed.find((record) => record.id === obj(created.body).id)?.config).toEqual({
      bar: "soup",
      n: [1, { x: null }],
    });

    const withFile = formOf({ config: JSON.stringify({ bar: "moop" }) });
    withFile.set("add_attachment[foodb]", new Blob(["x".repeat(1964)]), "foo-database.db");
    const attached = obj((await client.request("PATCH", path, { form: withFile })).body).config;
    expect(attached).toEqual({
      bar: "moop",
      foodb: { uid: 1, saved: true, size: 1964, name: "foo-database.db", type: "application/octet-stream" },
    });
    // A new config keeps the attachment; remove_attachment[KEY] takes it away.
    const replaced = await client.request("PATCH", path, { form: formOf({ config: '{"bar":"new"}' }) });
    expect(obj(replaced.body).config).toEqual({ ...(attached as object), bar: "new" });
    const removed = await client.request("PATCH", path, {
      form: formOf({ "remove_attachment[foodb]": "1" }),
    });
    expect(obj(removed.body).config).toEqual({ bar: "new" });
  });

  it("ignores config in a JSON body; a form's config that is not JSON is a 500 and writes nothing", async () => {
    const client = await start();
    const fromJson = await client.post(CONFIGS, { plugin: 6, order: 1, config: { bar: "moop" } });
    expect([fromJson.status, obj(fromJson.body).config]).toEqual([201, {}]);
    const path = `${CONFIGS}/${obj(fromJson.body).id}`;
    expect(obj((await client.patch(path, { config: { bar: "x" } })).body).config).toEqual({});

    const before = client.emulator.snapshot().records;
    const broken = await postForm(client, CONFIGS, "plugin=6&order=2&config=%7Bbar");
    expect([broken.status, broken.body]).toEqual([
      500,
      errorBody("server_error", "error", "A server error occurred."),
    ]);
    expect((await patchForm(client, path, "order=7&config=not+json")).status).toBe(500);
    // Validation comes first: a bad field is the 400 it always is.
    expect((await postForm(client, CONFIGS, "order=2&config=%7Bbar")).status).toBe(400);
    expect(client.emulator.snapshot().records).toEqual(before);
    // An empty config field sets nothing.
    expect(obj((await patchForm(client, path, "config=")).body).config).toEqual({});
  });

  it("reads form-encoded text as the serializer does: booleans, numbers, empty values, missing checkboxes", async () => {
    const client = await start();
    const created = await postForm(
      client,
      CONFIGS,
      "plugin=+6+&order=4.&enabled=yes&name=&match_action=&deleted=0",
    );
    expect(created.status).toBe(201);
    const id = obj(created.body).id;
    // "" is a blank name (shown as the plugin's), null for match_action.
    expect(stored(client, id)).toMatchObject({
      plugin: 6,
      order: 4,
      enabled: true,
      name: "",
      match_action: null,
    });

    // An update leaves out what is not sent; a create reads an unticked checkbox as false.
    expect((await patchForm(client, `${CONFIGS}/${id}`, "description=Text")).status).toBe(200);
    expect(stored(client, id)).toMatchObject({ enabled: true, description: "Text" });
    const unticked = obj((await postForm(client, CONFIGS, "plugin=6&order=5")).body);
    expect(unticked.enabled).toBe(false);
    // An empty value of a field that may be neither null nor blank counts as not sent; numbers
    // are read by Python's int(), which takes underscores and other scripts' digits.
    expect((await patchForm(client, `${CONFIGS}/${id}`, "enabled=&order=1_0")).status).toBe(200);
    expect(stored(client, id)).toMatchObject({ enabled: true, order: 10 });
    expect((await patchForm(client, `${CONFIGS}/${id}`, "order=%D9%A7")).status).toBe(200);
    expect(stored(client, id)).toMatchObject({ order: 7 });
  });

  it("answers text it cannot convert with the serializer's errors, in field order", async () => {
    const client = await start();
    const cases: [string, ReturnType<typeof errorBody>][] = [
      ["order=1", errorBody("validation_error", "required", "This field is required.", "plugin")],
      ["plugin=&order=1", errorBody("validation_error", "null", "This field may not be null.", "plugin")],
      [
        "plugin=GeoIP&order=x",
        errorBody(
          "validation_error",
          "invalid_input",
          "Incorrect type. Expected pk value, received str.",
          "plugin",
        ),
      ],
      [
        "plugin=0099&order=1",
        errorBody(
          "validation_error",
          "does_not_exist",
          'Invalid pk "0099" - object does not exist.',
          "plugin",
        ),
      ],
      [
        "plugin=1&enabled=maybe&order=x",
        errorBody("validation_error", "invalid_input", "Must be a valid boolean.", "enabled"),
      ],
      [
        "plugin=1&order=",
        errorBody("validation_error", "invalid_input", "A valid integer is required.", "order"),
      ],
      [
        "plugin=1&order=1.5",
        errorBody("validation_error", "invalid_input", "A valid integer is required.", "order"),
      ],
      [
        "plugin=1&order=2147483648",
        errorBody(
          "validation_error",
          "max_value",
          "Ensure this value is less than or equal to 2147483647.",
          "order",
        ),
      ],
      [
        `plugin=1&order=${"1".repeat(1001)}`,
        errorBody("validation_error", "max_string_length", "String value too large.", "order"),
      ],
      [
        `plugin=1&order=1&name=${"n".repeat(401)}`,
        errorBody(
          "validation_error",
          "max_length",
          "Ensure this field has no more than 400 characters.",
          "name",
        ),
      ],
    ];
    for (const [text, error] of cases) {
      const reply = await postForm(client, CONFIGS, text);
      expect([text, reply.status, reply.body]).toEqual([text, 400, error]);
    }
  });

  it("takes the last of a field sent twice, and a file over a field of the same name", async () => {
    const client = await start();
    const twice = await postForm(client, CONFIGS, "plugin=6&order=1&order=5&name=first&name=second");
    expect(obj(twice.body)).toMatchObject({ order: 5, name: "second" });

    const boundary = "b0undary";
    const withFile = multipart(boundary, [
      field("plugin", "6"),
      field("order", "2"),
      field("name", "text"),
      { headers: ['Content-Disposition: form-data; name="name"; filename="name.txt"'], content: "file" },
    ]);
    const reply = await postForm(client, CONFIGS, withFile, `multipart/form-data; boundary=${boundary}`);
    expect(reply.body).toEqual(errorBody("validation_error", "invalid_input", "Not a valid string.", "name"));
  });

  it("parses multipart carefully: quoted names, parts without a name, empty filenames, header case", async () => {
    const client = await start();
    const boundary = '----x; y="z"';
    const body = multipart(boundary, [
      { headers: ["CONTENT-DISPOSITION: form-data; NAME=plugin"], content: "6" },
      { headers: ['Content-Disposition: form-data; filename="x.txt"'], content: "a nameless file" },
      { headers: ["Content-Disposition: form-data"], content: "a nameless field" },
      { headers: ["Content-Type: text/plain"], content: "no disposition" },
      // An empty filename is what a browser sends for an empty file input: a text field.
      { headers: ['Content-Disposition: form-data; name="order"; filename=""'], content: "3" },
      {
        headers: ['Content-Disposition: form-data; name="name"'],
        content: "Line one\r\n--not the boundary\r\nend",
      },
      {
        headers: ["Content-Disposition: form-data; name*=UTF-8''descr%69ption"],
        content: "Caf\u00e9 \u2615",
      },
    ]);
    const reply = await postForm(
      client,
      CONFIGS,
      `preamble\r\n${body}epilogue`,
      `multipart/form-data; boundary="${boundary.replaceAll('"', '\\"')}"`,
    );
    expect(reply.status).toBe(201);
    expect(obj(reply.body)).toMatchObject({
      plugin: 6,
      order: 3,
      name: "Line one\r\n--not the boundary\r\nend",
      description: "Caf\u00e9 \u2615",
    });
  });

  it("refuses malformed multipart with 400 and changes nothing", async () => {
    const client = await start();
    const before = client.emulator.snapshot().records.length;
    const boundary = "abc";
    const parts = [field("plugin", "6"), field("order", "1")];
    const cases: [string, string, string][] = [
      ["no closing boundary", `multipart/form-data; boundary=${boundary}`, multipart(boundary, parts, false)],
      ["no boundary parameter", "multipart/form-data", multipart(boundary, parts)],
      ["another boundary", "multipart/form-data; boundary=other", multipart(boundary, parts)],
      [
        "headers that never end",
        `multipart/form-data; boundary=${boundary}`,
        `--${boundary}\r\nContent-Disposition: form-data; name="plugin"\r\n--${boundary}--\r\n`,
      ],
      // Django checks the `multipart/` prefix of the header as sent.
      ["an upper-case media type", `Multipart/Form-Data; boundary=${boundary}`, multipart(boundary, parts)],
    ];
    const details: string[] = [];
    for (const [label, contentType, body] of cases) {
      const reply = await postForm(client, CONFIGS, body, contentType);
      expect([label, reply.status, obj(reply.body).code]).toEqual([label, 400, "parse_error"]);
      details.push(String(obj(reply.body).detail));
    }
    expect(details.every((detail) => detail.startsWith("Multipart form parse error - "))).toBe(true);
    expect(details[1]).toBe("Multipart form parse error - Invalid boundary in multipart: None");
    expect(details[4]).toBe(
      `Multipart form parse error - Invalid Content-Type: Multipart/Form-Data; boundary=${boundary}`,
    );
    expect(client.emulator.snapshot().records).toHaveLength(before);
  });

  it("honours the content type's charset and case, and reads an empty body as no fields", async () => {
    const client = await start();
    const latin1 = Buffer.concat([
      Buffer.from("plugin=6&order=1&name=Caf"),
      Buffer.from([0xe9]),
      Buffer.from("+%E9"),
    ]);
    const inLatin1 = await client.request("POST", CONFIGS, {
      rawBody: latin1,
      headers: { "content-type": `${FORM}; charset=ISO-8859-1` },
    });
    expect(obj(inLatin1.body).name).toBe("Caf\u00e9 \u00e9");
    const inUtf8 = await postForm(
      client,
      CONFIGS,
      "plugin=6&order=1&name=Caf%C3%A9",
      "Application/X-WWW-Form-Urlencoded; Charset=UTF-8",
    );
    expect(obj(inUtf8.body).name).toBe("Caf\u00e9");

    expect((await postForm(client, CONFIGS, "")).body).toEqual(
      errorBody("validation_error", "required", "This field is required.", "plugin"),
    );
    const unchanged = await patchForm(client, `${CONFIGS}/1`, "");
    expect(obj(unchanged.body)).toMatchObject({ id: 1, order: 1, enabled: true });
  });

  it("bounds a form like a JSON body: a huge field is a 413, more than 1000 fields a 400", async () => {
    const client = await start();
    const huge = await postForm(client, CONFIGS, `plugin=6&order=1&description=${"d".repeat(1024 * 1024)}`);
    expect(huge.status).toBe(413);
    const many = await postForm(client, CONFIGS, `plugin=6&order=1${"&x=1".repeat(999)}`);
    expect([many.status, obj(many.body).code]).toEqual([400, "parse_error"]);
    const boundary = "many";
    const parts = Array.from({ length: 1001 }, (_, index) => field(`x${index}`, "1"));
    const manyParts = await postForm(
      client,
      CONFIGS,
      multipart(boundary, parts),
      `multipart/form-data; boundary=${boundary}`,
    );
    expect([manyParts.status, obj(manyParts.body).code]).toEqual([400, "parse_error"]);
  });

  it("takes form bodies on create and update only, and the seed profile on none", async () => {
    const client = await start();
    expect((await postForm(client, CONFIGS, "plugin=6&order=1")).status).toBe(201);
    const unsupported = (type: string) =>
      errorBody("invalid_request", "unsupported_media_type", `Unsupported media type "${type}" in request.`);
    expect((await postForm(client, `${CONFIGS}/1/job`, "job=x")).body).toEqual(unsupported(FORM));
    expect((await patchForm(client, `${CONFIGS}/rearrange`, "orders=x")).body).toEqual(unsupported(FORM));

    const seed = await startTestEmulator();
    expect((await postForm(seed, CONFIGS, "plugin=6&order=1")).body).toEqual(unsupported(FORM));
    const boundary = "seed";
    const reply = await postForm(
      seed,
      CONFIGS,
      multipart(boundary, [field("plugin", "6")]),
      `multipart/form-data; boundary=${boundary}`,
    );
    expect(reply.body).toEqual(unsupported("multipart/form-data"));
  });
});
