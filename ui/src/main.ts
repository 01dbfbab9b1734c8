import { mount, unmount } from "svelte";
import { commands } from "./api";
import Unlock from "./Unlock.svelte";
import "./styles.css";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");
const app: HTMLElement = target;

/** The app itself, once the memory file is open (imported then: nothing of it runs before). */
async function start() {
  const { default: App } = await import("./App.svelte");
  mount(App, { target: app });
}

// A memory file that needs a passphrase is opened first, behind the prompt.
void commands
  .locked()
  .catch(() => null)
  .then((ask) => {
    if (!ask) {
      void start();
      return;
    }
    const prompt = mount(Unlock, {
      target: app,
      props: {
        ask,
        onunlocked: () => {
          void unmount(prompt);
          void start();
        },
      },
    });
  });
