# Unpacks the input archive into the output folder (what the notebook's
# script of the same name does, with the standard library only).
import argparse
import tarfile

parser = argparse.ArgumentParser()
parser.add_argument("--input_data", type=str)
parser.add_argument("--output_folder", type=str)
args = parser.parse_args()
with tarfile.open(args.input_data) as f:
    try:
        f.extractall(args.output_folder, filter="data")
    except TypeError:  # a Python without extraction filters
        f.extractall(args.output_folder)
print("unpacked into", args.output_folder)
