"""`thumbs`: thumbnails of files inside a data folder, for the predictions gallery. They decode and
show their image; a class folder named with shell syntax survives argv; a path out of the folder,
a broken file and the byte budget are each an entry's own answer."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys

from conftest import ROOT
from PIL import Image

WEIRD = "$(touch pwned) 'q\" ;|&<>*"


def cli(*args: str) -> tuple[int, dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run([sys.executable, "-m", "ascend_finetune", *args], capture_output=True, text=True, env=env)
    return r.returncode, json.loads(r.stdout.strip().splitlines()[-1])


def test_thumbs_decode_and_show_their_image_and_refuse_paths_out_of_the_folder(tmp_path):
    data = tmp_path / "data"
    (data / WEIRD).mkdir(parents=True)
    (data / "blue").mkdir()
    Image.new("RGB", (300, 200), (230, 20, 20)).save(data / WEIRD / "a.jpg")
    Image.new("RGB", (64, 64), (20, 20, 230)).save(data / "blue" / "b.png")
    (data / "blue" / "broken.jpg").write_bytes(b"not a picture")
    (tmp_path / "secret.png").write_bytes((data / "blue" / "b.png").read_bytes())
    os.symlink(tmp_path / "secret.png", data / "blue" / "link.png")
    files = [f"{WEIRD}/a.jpg", "blue/b.png", "blue/broken.jpg", "../secret.png", "blue/link.png", "blue/none.jpg"]
    code, out = cli("thumbs", str(data), "--", *files)
    assert code == 0, out
    got = {e["file"]: e for e in out["thumbs"]}
    assert list(got) == files and not (tmp_path / "pwned").exists()
    colours = {}
    for f in files[:2]:
        im = Image.open(io.BytesIO(base64.b64decode(got[f]["jpeg"])))
        assert im.format == "JPEG" and max(im.size) <= 96
        colours[f] = im.convert("RGB").getpixel((im.width // 2, im.height // 2))
    assert colours[files[0]][0] > 180 and colours[files[0]][2] < 80  # red
    assert colours[files[1]][2] > 180 and colours[files[1]][0] < 80  # blue
    assert Image.open(io.BytesIO(base64.b64decode(got[files[0]]["jpeg"]))).size == (96, 64)
    for f in files[2:]:
        assert "jpeg" not in got[f] and got[f]["error"], got[f]
    assert "out of the data folder" in got["../secret.png"]["error"]
    assert "out of the data folder" in got["blue/link.png"]["error"]
    assert out["bytes"] == sum(len(e.get("jpeg", "")) for e in out["thumbs"]) and out["left_out"] == 0


def test_thumbs_stop_at_the_byte_budget_and_say_what_was_left_out(tmp_path):
    data = tmp_path / "d"
    (data / "c").mkdir(parents=True)
    for i in range(5):
        Image.new("RGB", (80, 80), (i * 40, 100, 100)).save(data / "c" / f"{i}.jpg")
    code, out = cli("thumbs", str(data), "--max-bytes", "1", *[f"c/{i}.jpg" for i in range(5)])
    assert code == 0
    assert "jpeg" in out["thumbs"][0] and all(e.get("left_out") for e in out["thumbs"][1:]) and out["left_out"] == 4
    code, out = cli("thumbs", str(tmp_path / "nowhere"), "c/0.jpg")
    assert code == 2 and out["error"]["kind"] == "bad_input" and "nowhere" in out["error"]["message"]
