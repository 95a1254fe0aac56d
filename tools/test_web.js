// The test inside LÖVE, in a browser (make test-web): serves DIR, a love.js build of
// spec/love/, with `python3 -m http.server` on a free local port, loads its index.html in
// headless chromium and prints what the game prints (love.js sends Lua's print to the
// browser console) until the game's last line, `N passed, N failed`.
//   node tools/test_web.js DIR [TIMEOUT-SECONDS]
// CHROMIUM names the browser (default /usr/bin/chromium). Exit status 0 only when that line
// came, says 0 failed and N > 0; 1 when it says otherwise, when the page failed first (an
// uncaught error: its message is printed), or after the timeout (default 600 s). The last
// line printed is always `N passed, N failed`: the game's, or, when it never came, the
// `ok - ` and `FAIL - ` lines counted so far and one failure more. What the page prints
// after the game's line (love.js's own errors as the game quits) is left out.
"use strict";
const { spawn } = require("child_process");
const puppeteer = require("puppeteer-core");

const dir = process.argv[2];
const timeout = 1000 * Number(process.argv[3] || 600);
if (!dir) {
    console.error("usage: node tools/test_web.js DIR [TIMEOUT-SECONDS]");
    process.exit(2);
}

// python3 -m http.server on port 0 takes a free port and says which: "Serving HTTP on
// 127.0.0.1 port N (...)". Resolves to the server process and its port.
function serve(root) {
    return new Promise((resolve, reject) => {
        const server = spawn("python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
            "--directory", root], { stdio: ["ignore", "pipe", "ignore"] });
        let out = "";
        server.on("error", reject);
        server.on("exit", (code) => reject(new Error(`python3 -m http.server exited (${code})`)));
        server.stdout.on("data", (chunk) => {
            out += chunk;
            const m = / port (\d+)/.exec(out);
            if (m) resolve({ server, port: Number(m[1]) });
        });
    });
}

const SUMMARY = /^(\d+) passed, (\d+) failed$/;

async function main() {
    const { server, port } = await serve(dir);
    server.removeAllListeners("exit");
    const url = `http://127.0.0.1:${port}/index.html`;
    console.log(`test_web: ${url} (${dir}) in ${process.env.CHROMIUM || "/usr/bin/chromium"}`);
    try {
        return await run(url);
    } finally {
        server.kill();
    }
}

async function run(url) {
    const browser = await puppeteer.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        // --use-angle=swiftshader: WebGL in software, with no GPU and no display.
        args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
    });
    let status = 1;
    let finished = false; // the game's last line came: print nothing more
    let passed = 0, failed = 0;
    // Ends the run without the game's counts: why, then the counts so far and one more failure.
    const stop = (resolve, why) => {
        if (finished) return;
        finished = true;
        console.log("test_web: " + why);
        console.log(`${passed} passed, ${failed + 1} failed`);
        resolve(1);
    };
    try {
        const page = await browser.newPage();
        const done = new Promise((resolve) => {
            page.on("console", (message) => {
                for (const line of message.text().split("\n")) {
                    if (finished) return;
                    console.log(line);
                    if (line.startsWith("ok - ")) passed++;
                    if (line.startsWith("FAIL - ")) failed++;
                    const m = SUMMARY.exec(line);
                    if (m) {
                        finished = true;
                        resolve(Number(m[1]) > 0 && Number(m[2]) === 0 ? 0 : 1);
                    }
                }
            });
            page.on("pageerror", (error) => stop(resolve, "the page failed: " + error.message));
            setTimeout(() => stop(resolve, `no \`N passed, N failed\` line within ${timeout / 1000} s`),
                timeout);
        });
        await page.goto(url);
        status = await done;
    } finally {
        await browser.close();
    }
    return status;
}

main().then((status) => process.exit(status), (error) => {
    console.log("test_web: " + (error && error.stack || error));
    console.log("0 passed, 1 failed");
    process.exit(1);
});
